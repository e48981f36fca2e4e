import { AppShell, Button, Group, NavLink, Stack, Text, Title } from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { Suspense, useState } from 'react';
import { Link, Outlet, useLocation, useNavigate } from 'react-router-dom';
import { api, session } from './api/client';
import { Loading } from './Loading';
import { SECTIONS, visible } from './nav';
import { useWhoami } from './whoami';

/** A link is active on its own page and on the pages under it (`/flows/123` lights "Flows"). */
const isActive = (to: string, path: string) => path === to || path.startsWith(`${to}/`);

export function Layout() {
  const location = useLocation();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const whoami = useWhoami();
  const [signingOut, setSigningOut] = useState(false);
  const permissions = whoami.data?.permissions ?? [];

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
              <>
                <Text size="sm" fw={500} data-testid="operator-name">
                  {whoami.data.operator.name}
                </Text>
                <Text size="sm" c="dimmed" data-testid="operator-email">
                  {whoami.data.operator.email}
                </Text>
              </>
            )}
            <Button variant="default" size="xs" onClick={signOut} loading={signingOut}>
              Sign out
            </Button>
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" aria-label="Main">
        {SECTIONS.map((section) => {
          const links = visible(section.links, permissions, whoami.data?.admin);
          if (links.length === 0) return null;
          return (
            <Stack key={section.title ?? ''} gap={0} mb="xs">
              {section.title && (
                <Text size="xs" fw={700} c="dimmed" tt="uppercase" px="sm" pt="xs">
                  {section.title}
                </Text>
              )}
              {links.map((l) => (
                <NavLink key={l.to} component={Link} to={l.to} label={l.label} active={isActive(l.to, location.pathname)} />
              ))}
            </Stack>
          );
        })}
        <NavLink component="a" href="/api/docs" target="_blank" label="API docs ↗" />
      </AppShell.Navbar>
      <AppShell.Main>
        <Suspense fallback={<Loading />}>
          <Outlet />
        </Suspense>
      </AppShell.Main>
    </AppShell>
  );
}
