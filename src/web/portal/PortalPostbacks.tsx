import { Stack, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { api, must } from '../api/client';
import { PostbacksPanel, type PostbackSource } from '../screens/providers/PostbacksPanel';
import { useCanEdit } from './me';

/** The provider's own postbacks: the operators' panel on the portal's routes (no retry: a test send instead). */
export default function PortalPostbacks() {
  const canEdit = useCanEdit();
  const campaigns = useQuery({
    queryKey: ['portal-campaigns'],
    queryFn: async () => must(await api.GET('/api/portal/campaigns', { params: { query: { limit: 500 } } })),
  });
  const source: PostbackSource = {
    key: ['portal-postbacks'],
    get: () => api.GET('/api/portal/postbacks'),
    put: (postbacks) => api.PUT('/api/portal/postbacks', { body: { postbacks } }),
    test: (body) => api.POST('/api/portal/postbacks/test', { body }),
    deliveries: async () =>
      must(await api.GET('/api/portal/postbacks/deliveries', { params: { query: { limit: 50 } } })),
    delivery: async (d) =>
      must(await api.GET('/api/portal/postbacks/deliveries/{deliveryId}', { params: { path: { deliveryId: d } } })),
    campaigns: (campaigns.data?.data ?? []).map((c) => ({ value: c.id, label: c.name })),
  };
  return (
    <Stack>
      <Title order={1} size="h2">
        Postbacks
      </Title>
      <PostbacksPanel
        source={source}
        canEdit={canEdit}
        title="Calls to your tracker"
        intro="We call these URLs on your tracker (GET) when your leads are accepted or refused, make a deposit (FTD) or change sale status. Save first, then send a test postback to check your tracker takes it."
      />
    </Stack>
  );
}
