import { Anchor, List, Stack, Text, Title } from '@mantine/core';
import { Link } from 'react-router-dom';
import { usePortalMe } from './me';
import { PORTAL_LINKS } from './nav';

/** The portal's start: whose portal this is, what it shows, and where to go. */
export default function PortalHome() {
  const me = usePortalMe().data!;
  const { shows } = me;
  return (
    <Stack maw={720}>
      <Title order={1} size="h2">
        {me.traffic_provider.name}
      </Title>
      <Text>
        Your leads, their statistics and your integration with us. Everything here is about {me.traffic_provider.name}{' '}
        only.
      </Text>
      <List size="sm" data-testid="portal-shows">
        <List.Item>Sale statuses: {shows.sale_status ? 'shown' : 'not shown'}</List.Item>
        <List.Item>Payouts: {shows.payout ? 'shown' : 'not shown'}</List.Item>
        <List.Item>Contacts you sent: {shows.contacts ? 'shown, masked' : 'not shown'}</List.Item>
      </List>
      <Stack gap={4}>
        {PORTAL_LINKS.slice(1).map((l) => (
          <Anchor key={l.to} component={Link} to={l.to}>
            {l.label}
          </Anchor>
        ))}
      </Stack>
    </Stack>
  );
}
