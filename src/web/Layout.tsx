import { AppShell, Button, Group, NavLink, Text, Title } from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { Suspense, useState } from 'react';
import { Link, Outlet, useLocation, useNavigate } from 'react-router-dom';
import { api, session } from './api/client';
import { Loading } from './Loading';
import { useWhoami } from './whoami';

// Only screens that exist are linked: a screen is added here when it is built. A link with a
// `permission` is hidden from operators who lack it.
const LINKS: { to: string; label: string; permission?: string }[] = [
  { to: '/leads', label: 'Leads', permission: 'leads:view' },
  { to: '/flows', label: 'Flows', permission: 'flows:view' },
  { to: '/traffic-providers', label: 'Traffic providers', permission: 'traffic_providers:view' },
  { to: '/campaigns', label: 'Campaigns', permission: 'campaigns:view' },
  { to: '/partners', label: 'Partners', permission: 'partners:view' },
  { to: '/settings/api', label: 'API keys' },
];

export function Layout() {
  const location = useLocation();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const whoami = useWhoami();
  const [signingOut, setSigningOut] = useState(false);

  async function signOut() {
    setSigningOut(true);
    // The session is dropped locally even if the server cannot be reached: the operator asked.
    await api.POST('/api/auth/logout').catch(() => undefined);
    session.clear();
    queryClient.clear();
    navigate('/login', { replace: true });
  }

  return (
    <AppShell header={{ height: 56 }} navbar={{ width: 220, breakpoint: 'sm' }} padding="md">
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between">
          <Title order={3}>Leadgate</Title>
          <Group>
            {whoami.data && (
              <Text size="sm" c="dimmed" data-testid="operator-email">
                {whoami.data.operator.email}
              </Text>
            )}
            <Button variant="default" size="xs" onClick={signOut} loading={signingOut}>
              Sign out
            </Button>
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" aria-label="Main">
        {LINKS.filter((l) => !l.permission || whoami.data?.permissions.includes(l.permission)).map((l) => (
          <NavLink key={l.to} component={Link} to={l.to} label={l.label} active={location.pathname === l.to} />
        ))}
        <NavLink component="a" href="/api/docs" label="API docs" />
      </AppShell.Navbar>
      <AppShell.Main>
        <Suspense fallback={<Loading />}>
          <Outlet />
        </Suspense>
      </AppShell.Main>
    </AppShell>
  );
}
