import {
  Anchor,
  AppShell,
  Burger,
  Button,
  Group,
  NavLink,
  ScrollArea,
  Stack,
  Text,
  Title,
  useMantineTheme,
} from '@mantine/core';
import { useDisclosure, useDocumentTitle, useMediaQuery } from '@mantine/hooks';
import { useQueryClient } from '@tanstack/react-query';
import { Suspense, useState } from 'react';
import { Link, Outlet, useLocation, useNavigate } from 'react-router-dom';
import { api, session } from './api/client';
import { Loading } from './Loading';
import { isActive, pageTitle, SECTIONS, visible } from './nav';
import { NotificationBell } from './screens/notifications/NotificationBell';
import { useWhoami } from './whoami';

export function Layout() {
  const location = useLocation();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const whoami = useWhoami();
  const [signingOut, setSigningOut] = useState(false);
  // The menu on a phone: closed until the burger opens it, closed again once a link is chosen.
  const [menuOpen, menu] = useDisclosure(false);
  const wide = useMediaQuery(`(min-width: ${useMantineTheme().breakpoints.sm})`, true, {
    getInitialValueInEffect: false,
  });
  // A closed phone menu is only slid off screen by Mantine: hidden too, so that Tab and screen
  // readers do not reach its links (visibility is listed as transitioning so the slide still shows).
  const menuHidden = !wide && !menuOpen;
  const permissions = whoami.data?.permissions ?? [];
  useDocumentTitle(pageTitle(location.pathname));

  async function signOut() {
    setSigningOut(true);
    // The session is dropped locally even if the server cannot be reached: the operator asked.
    await api.POST('/api/auth/logout').catch(() => undefined);
    session.clear();
    queryClient.clear();
    navigate('/login', { replace: true });
  }

  return (
    <AppShell
      header={{ height: 56 }}
      navbar={{ width: 220, breakpoint: 'sm', collapsed: { mobile: !menuOpen } }}
      padding="md"
    >
      <AppShell.Header>
        {/* One line at every width: below `sm` the email goes, a long name is cut, Sign out stays. */}
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group gap="sm" wrap="nowrap">
            <Burger
              opened={menuOpen}
              onClick={menu.toggle}
              hiddenFrom="sm"
              size="sm"
              aria-label={menuOpen ? 'Close menu' : 'Open menu'}
              aria-expanded={menuOpen}
              aria-controls="main-menu"
            />
            {/* The name leads home to the Overview (and its first-run checklist) in one tap, menu or not. */}
            <Title order={2} size="h3">
              <Anchor component={Link} to="/" inherit c="inherit" underline="hover" onClick={menu.close}>
                Leadgate
              </Anchor>
            </Title>
          </Group>
          <Group gap="sm" wrap="nowrap" miw={0}>
            {whoami.data && (
              <>
                <Text size="sm" fw={500} truncate="end" data-testid="operator-name">
                  {whoami.data.operator.name}
                </Text>
                <Text size="sm" c="dimmed" truncate="end" visibleFrom="sm" data-testid="operator-email">
                  {whoami.data.operator.email}
                </Text>
              </>
            )}
            {whoami.data && <NotificationBell />}
            <Button variant="default" size="xs" onClick={signOut} loading={signingOut} style={{ flexShrink: 0 }}>
              Sign out
            </Button>
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar
        p="xs"
        aria-label="Main"
        id="main-menu"
        style={{
          visibility: menuHidden ? 'hidden' : undefined,
          transitionProperty: 'transform, top, height, visibility',
        }}
      >
        <AppShell.Section grow component={ScrollArea}>
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
                  <NavLink
                    key={l.to}
                    component={Link}
                    to={l.to}
                    label={l.label}
                    active={isActive(l.to, location.pathname)}
                    onClick={menu.close}
                  />
                ))}
              </Stack>
            );
          })}
          <NavLink component="a" href="/api/docs" target="_blank" label="API docs ↗" />
        </AppShell.Section>
      </AppShell.Navbar>
      <AppShell.Main>
        {whoami.data && <ScopeNotice scope={whoami.data.scope} />}
        <Suspense fallback={<Loading />}>
          <Outlet />
        </Suspense>
      </AppShell.Main>
    </AppShell>
  );
}

type Scope = NonNullable<ReturnType<typeof useWhoami>['data']>['scope'];

/** A role limited to some providers or partners says so on every screen: what is not listed is not counted. */
function ScopeNotice({ scope }: { scope: Scope }) {
  const names = (list: { id: string; name: string | null }[]) => list.map((r) => r.name ?? r.id).join(', ');
  const parts = [
    scope.traffic_providers && `traffic providers ${names(scope.traffic_providers)}`,
    scope.partners && `partners ${names(scope.partners)}`,
  ].filter(Boolean);
  if (!parts.length) return null;
  return (
    <Text size="sm" c="dimmed" mb="sm" data-testid="scope-notice">
      Your role shows the leads, reports and figures of {parts.join(' and ')} only.
    </Text>
  );
}
