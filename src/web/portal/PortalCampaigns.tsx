import { Accordion, Alert, Badge, Button, Code, Group, Stack, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, must, problemText } from '../api/client';
import { Loading } from '../Loading';
import { ConfirmDialog } from '../ui/ConfirmDialog';
import { CopyValueButton } from '../ui/CopyValueButton';
import { CampaignDocs } from './CampaignDocs';
import { useCanEdit } from './me';
import type { PortalCampaign } from './types';

type Rotated = { token: string; intake_url: string };

const payoutText = (p: PortalCampaign['payout']) =>
  p
    ? `${p.model.toUpperCase()} ${p.amount} ${p.currency}${
        Object.keys(p.by_country).length
          ? ` (${Object.entries(p.by_country)
              .map(([c, a]) => `${c} ${a}`)
              .join(', ')})`
          : ''
      }`
    : null;

/** The provider's campaigns, each with its intake documentation; the intake token's rotation. */
export default function PortalCampaigns() {
  const canEdit = useCanEdit();
  const campaigns = useQuery({
    queryKey: ['portal-campaigns'],
    queryFn: async () => must(await api.GET('/api/portal/campaigns', { params: { query: { limit: 500 } } })),
  });
  const [confirm, setConfirm] = useState(false);
  const [rotated, setRotated] = useState<Rotated | null>(null);

  async function rotate() {
    setRotated(must(await api.POST('/api/portal/intake-token/rotate')));
    setConfirm(false);
  }

  const list = campaigns.data?.data ?? [];
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1} size="h2">
          Campaigns
        </Title>
        {canEdit && (
          <Button variant="default" color="red" onClick={() => setConfirm(true)}>
            Rotate intake token
          </Button>
        )}
      </Group>
      <Text size="sm" c="dimmed">
        Post your leads to a campaign as its documentation shows. Every request carries your intake token.
      </Text>
      {rotated && (
        <Alert color="orange" title="Your new intake token: copy it now" data-testid="rotated-token">
          <Stack gap="xs">
            <Text size="sm">This is the only time it is shown. The old token no longer works.</Text>
            <Code block style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-all' }} data-testid="intake-token">
              {rotated.token}
            </Code>
            <Group>
              <CopyValueButton value={rotated.token} />
              <Button variant="subtle" onClick={() => setRotated(null)}>
                Done
              </Button>
            </Group>
          </Stack>
        </Alert>
      )}
      {campaigns.isError && (
        <Alert color="red" role="alert">
          {problemText(campaigns.error)}
        </Alert>
      )}
      {campaigns.isPending ? (
        <Loading />
      ) : list.length === 0 ? (
        <Text data-testid="portal-campaigns-empty">You have no campaigns yet: ask your account manager.</Text>
      ) : (
        <Accordion variant="separated" order={2} data-testid="portal-campaigns">
          {list.map((c) => (
            <Accordion.Item key={c.id} value={c.id}>
              <Accordion.Control>
                <Group gap="xs">
                  <Text fw={500}>{c.name}</Text>
                  <Badge color={c.status === 'active' ? 'green' : 'gray'}>{c.status}</Badge>
                </Group>
                <Text size="xs" c="dimmed">
                  {c.countries.length ? c.countries.join(', ') : 'Every country'}
                  {payoutText(c.payout) ? ` · ${payoutText(c.payout)}` : ''}
                </Text>
              </Accordion.Control>
              <Accordion.Panel>
                <CampaignDocs campaignId={c.id} />
              </Accordion.Panel>
            </Accordion.Item>
          ))}
        </Accordion>
      )}
      <ConfirmDialog
        opened={confirm}
        title="Rotate your intake token?"
        confirmLabel="Rotate token"
        onConfirm={rotate}
        onClose={() => setConfirm(false)}
      >
        <Text size="sm">
          A new token is made and the current one stops working at once: leads sent with it are refused until you use
          the new one.
        </Text>
      </ConfirmDialog>
    </Stack>
  );
}
