import { Alert, Anchor, AppShell, Burger, Button, Group, NavLink, Stack, Text, Title } from '@mantine/core';
import { useDisclosure, useDocumentTitle } from '@mantine/hooks';
import { useQueryClient } from '@tanstack/react-query';
import { Suspense, useState } from 'react';
import { Link, Outlet, useLocation, useNavigate } from 'react-router-dom';
import { api, problemText, session } from '../api/client';
import { Loading } from '../Loading';
import { usePhone } from '../ui/TableBox';
import { usePortalMe } from './me';
import { PORTAL_LINKS, portalActive, portalTitle } from './nav';

/** The traffic provider's portal: its own header and menu, at phone and desktop widths. */
export default function PortalLayout() {
  const location = useLocation();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const me = usePortalMe();
  const phone = usePhone();
  const [menuOpen, menu] = useDisclosure(false);
  const [signingOut, setSigningOut] = useState(false);
  useDocumentTitle(portalTitle(location.pathname));
  // A closed phone menu is hidden too, so that Tab and screen readers do not reach its links.
  const menuHidden = phone && !menuOpen;

  async function signOut() {
    setSigningOut(true);
    // The session is dropped here even if the server cannot be reached: the user asked.
    await api.POST('/api/portal/logout').catch(() => undefined);
    session.clear();
    queryClient.clear();
    navigate('/login', { replace: true });
  }

  const data = me.data;
  return (
    <AppShell
      header={{ height: 56 }}
      navbar={{ width: 200, breakpoint: 'sm', collapsed: { mobile: !menuOpen } }}
      padding="md"
    >
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group gap="sm" wrap="nowrap" miw={0}>
            <Burger
              opened={menuOpen}
              onClick={menu.toggle}
              hiddenFrom="sm"
              size="sm"
              aria-label={menuOpen ? 'Close menu' : 'Open menu'}
              aria-expanded={menuOpen}
              aria-controls="portal-menu"
            />
            <Title order={2} size="h3" style={{ whiteSpace: 'nowrap' }}>
              <Anchor component={Link} to="/portal" inherit c="inherit" underline="hover" onClick={menu.close}>
                Leadgate
              </Anchor>
            </Title>
            {data && (
              <Text size="sm" fw={500} truncate="end" data-testid="portal-provider">
                {data.traffic_provider.name}
              </Text>
            )}
          </Group>
          <Group gap="sm" wrap="nowrap" miw={0}>
            {data && (
              <Text size="sm" c="dimmed" truncate="end" visibleFrom="sm" data-testid="portal-user">
                {data.view_as ? 'Operator view' : data.user.email}
              </Text>
            )}
            <Button variant="default" size="xs" onClick={signOut} loading={signingOut} style={{ flexShrink: 0 }}>
              Sign out
            </Button>
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar
        p="xs"
        aria-label="Portal"
        id="portal-menu"
        style={{
          visibility: menuHidden ? 'hidden' : undefined,
          transitionProperty: 'transform, top, height, visibility',
        }}
      >
        {PORTAL_LINKS.map((l) => (
          <NavLink
            key={l.to}
            component={Link}
            to={l.to}
            label={l.label}
            active={portalActive(l.to, location.pathname)}
            onClick={menu.close}
          />
        ))}
      </AppShell.Navbar>
      <AppShell.Main>
        <Stack>
          {me.isError && (
            <Alert color="red" role="alert">
              {problemText(me.error)}
            </Alert>
          )}
          {data?.view_as && (
            <Alert color="blue" data-testid="view-as-banner">
              You are viewing the portal of {data.traffic_provider.name} as the provider sees it. Read only: nothing can
              be changed from here.
            </Alert>
          )}
          {data && data.shows.ftd_hold_hours > 0 && (
            <Text size="sm" data-testid="ftd-hold">
              FTDs are confirmed after {data.shows.ftd_hold_hours} h: an FTD shows here (and is posted back) that long
              after it is recorded.
            </Text>
          )}
          <Suspense fallback={<Loading />}>{data ? <Outlet /> : <Loading />}</Suspense>
        </Stack>
      </AppShell.Main>
    </AppShell>
  );
}
