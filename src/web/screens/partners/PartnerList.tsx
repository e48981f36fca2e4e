import { Badge, Table, Text } from '@mantine/core';
import { Link } from 'react-router-dom';
import { api, must } from '../../api/client';
import { useWhoami } from '../../whoami';
import { hoursText, type Partner } from './form';
import { ListPage, usePagedList } from '../../ui/ListPage';
import { HealthControls, HealthNumbers, usePartnerHealth } from './PartnerHealth';

/** "CPL $40 (+2 countries) · CRG 10 % a month", or "—" without a deal. */
function dealText(d: Partner['deal']): string {
  if (!d) return '—';
  const countries = Object.keys(d.by_country).length;
  const price = `${d.model.toUpperCase()} $${d.amount}${countries ? ` (+${countries} ${countries === 1 ? 'country' : 'countries'})` : ''}`;
  return d.crg ? `${price} · CRG ${d.crg.rate} % a ${d.crg.period}` : price;
}

export default function PartnerList() {
  const whoami = useWhoami();
  const partners = usePagedList(['partners', 'list'], async (cursor) =>
    must(await api.GET('/api/partners', { params: { query: { limit: 100, cursor } } })),
  );
  const canEdit = whoami.data?.permissions.includes('partners:edit') ?? false;
  const health = new Map((usePartnerHealth().data?.data ?? []).map((h) => [h.id, h]));

  return (
    <ListPage
      title="Partners"
      create={{ label: 'New partner', to: '/partners/new', allowed: canEdit }}
      intro="A partner is a buyer that leads are delivered to through its own HTTP API, within its countries, working hours and caps."
      list={partners}
      empty={<>There are no partners yet.{canEdit && ' Add one with “New partner”.'}</>}
      testId="partners"
      headers={['Name', 'Health', 'Today', 'Countries', 'Caps (daily / hourly / total)', 'Deal', 'Working hours']}
      wideOnly={['Countries', 'Caps (daily / hourly / total)', 'Deal', 'Working hours']}
      row={(p) => (
        <Table.Tr key={p.id} data-testid="partner-row" data-partner-id={p.id}>
          <Table.Td>
            <Text component={Link} to={`/partners/${p.id}`} fw={500} c="blue">
              {p.name}
            </Text>
          </Table.Td>
          <Table.Td>
            {health.has(p.id) ? (
              <HealthControls h={health.get(p.id)!} />
            ) : (
              <Badge color={p.status === 'active' ? 'green' : 'gray'}>{p.status}</Badge>
            )}
          </Table.Td>
          <Table.Td>{health.has(p.id) && <HealthNumbers h={health.get(p.id)!} />}</Table.Td>
          <Table.Td visibleFrom="sm">{p.countries.join(', ') || 'All'}</Table.Td>
          <Table.Td visibleFrom="sm">
            {p.daily_cap ?? '—'} / {p.hourly_cap ?? '—'} / {p.total_cap ?? '—'}
          </Table.Td>
          <Table.Td visibleFrom="sm" data-testid="partner-deal-summary">
            {dealText(p.deal)}
          </Table.Td>
          <Table.Td visibleFrom="sm">{hoursText(p.working_hours)}</Table.Td>
        </Table.Tr>
      )}
    />
  );
}
