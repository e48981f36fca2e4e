import {
  Alert,
  Button,
  Checkbox,
  Group,
  Modal,
  MultiSelect,
  NumberInput,
  SegmentedControl,
  Select,
  SimpleGrid,
  Stack,
  Switch,
  Text,
  TextInput,
} from '@mantine/core';
import { keepPreviousData, useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, must, problemText } from '../../api/client';
import type { paths } from '../../api/schema';
import { TimezoneSelect } from '../../ui/inputs';
import { allOptions } from '../../ui/options';
import { useWhoami } from '../../whoami';
import { STATUSES } from '../leads/filters';

export type Rule = paths['/api/injection-rules/{id}']['get']['responses'][200]['content']['application/json'];
type Filter = Rule['filter'];
type Weekday = Rule['schedule']['days'][number];

const WEEKDAYS: [Weekday, string][] = [
  ['mon', 'Mon'],
  ['tue', 'Tue'],
  ['wed', 'Wed'],
  ['thu', 'Thu'],
  ['fri', 'Fri'],
  ['sat', 'Sat'],
  ['sun', 'Sun'],
];
const DATE_TYPES = [
  { value: 'status_updated', label: 'Status changed' },
  { value: 'registration', label: 'Registered' },
  { value: 'delivered', label: 'Delivered' },
  { value: 'ftd', label: 'FTD' },
];
const LABELS = {
  name: 'Name',
  flow_id: 'Flow',
  partner_ids: 'Partners',
  per_minute: 'Leads per minute',
  'filter.last_days': 'Last days',
  'schedule.at': 'At',
  'window.from': 'Open from',
  'window.to': 'Open until',
};
const HHMM = /^([01]\d|2[0-3]):[0-5]\d$/;

interface Props {
  /** The rule to edit; null: a new one. */
  rule: Rule | null;
  onClose: () => void;
  onSaved: () => void;
}

/**
 * A recurring rule's form (POST/PATCH /api/injection-rules): the Leads filters with a relative
 * window, the schedule, the target and the pace. The preview counts what a run now would take.
 */
export function RuleForm({ rule, onClose, onSaved }: Props) {
  const whoami = useWhoami().data;
  const can = (p: string) => (whoami?.permissions ?? []).includes(p as never);
  const f = rule?.filter;
  const [name, setName] = useState(rule?.name ?? '');
  const [status, setStatus] = useState<string[]>(f?.status ?? ['rejected']);
  const [campaignId, setCampaignId] = useState<string | null>(f?.campaign_id ?? null);
  const [dateType, setDateType] = useState<string>(f?.date_type ?? 'status_updated');
  const [lastDays, setLastDays] = useState<number | string>(f?.last_days ?? 7);
  const [chosen, setKind] = useState<string>(rule?.partner_ids ? 'partners' : 'flow');
  // A role that cannot read flows sends to partners (a role limited to some partners must).
  const kind = chosen === 'flow' && !can('flows:view') && can('partners:view') ? 'partners' : chosen;
  const [flowId, setFlowId] = useState<string | null>(rule?.flow_id ?? null);
  const [partnerIds, setPartnerIds] = useState<string[]>(rule?.partner_ids ?? []);
  const [perMinute, setPerMinute] = useState<number | string>(rule?.per_minute ?? 60);
  const [timeZone, setTimeZone] = useState(rule?.schedule.time_zone ?? whoami?.operator.timezone ?? 'UTC');
  const [at, setAt] = useState(rule?.schedule.at ?? '10:00');
  const [days, setDays] = useState<string[]>(rule?.schedule.days ?? WEEKDAYS.map(([d]) => d));
  const [hours, setHours] = useState(rule?.window != null);
  const [open, setOpen] = useState({ from: rule?.window?.from ?? '09:00', to: rule?.window?.to ?? '18:00' });
  const [reoffer, setReoffer] = useState(rule?.reoffer ?? false);

  // The filters this form does not offer (set through the API) are kept as they are.
  const filter: Filter = {
    ...f,
    date_type: dateType as Filter['date_type'],
    last_days: Number(lastDays) || 0,
    status: status.length ? status : undefined,
    campaign_id: campaignId ?? undefined,
  };
  const preview = useQuery({
    queryKey: ['injection-rule-preview', JSON.stringify(filter)],
    enabled: filter.last_days >= 1 && filter.last_days <= 365,
    placeholderData: keepPreviousData,
    queryFn: async () => must(await api.POST('/api/injection-rules/preview', { body: { filter } })),
  });
  const campaigns = useQuery({
    queryKey: ['options', '/api/campaigns'],
    enabled: can('campaigns:view'),
    queryFn: () => allOptions('/api/campaigns'),
  });
  const flows = useQuery({
    queryKey: ['options', '/api/flows'],
    enabled: can('flows:view'),
    queryFn: () => allOptions('/api/flows'),
  });
  const partners = useQuery({
    queryKey: ['options', '/api/partners'],
    enabled: can('partners:view'),
    queryFn: () => allOptions('/api/partners'),
  });
  const save = useMutation({
    mutationFn: async () => {
      const body = {
        name,
        filter,
        ...(kind === 'flow' ? { flow_id: flowId ?? '' } : { partner_ids: partnerIds }),
        per_minute: Number(perMinute),
        reoffer,
        schedule: { time_zone: timeZone, at, days: days as Weekday[] },
      };
      const window = hours ? { time_zone: timeZone, ...open } : undefined;
      return rule
        ? must(
            await api.PATCH('/api/injection-rules/{id}', {
              params: { path: { id: rule.id } },
              body: { ...body, window: window ?? null },
            }),
            LABELS,
          )
        : must(await api.POST('/api/injection-rules', { body: { ...body, window, enabled: true } }), LABELS);
    },
    onSuccess: onSaved,
  });
  const count = preview.data?.count;
  const ready = name.trim() && days.length && HHMM.test(at) && (kind === 'flow' ? flowId : partnerIds.length);
  return (
    <Modal opened onClose={onClose} title={rule ? `Edit rule “${rule.name}”` : 'New re-injection rule'} size="lg">
      <Stack gap="sm">
        <TextInput label="Name" value={name} onChange={(e) => setName(e.currentTarget.value)} required />
        <SimpleGrid cols={{ base: 1, sm: 2 }}>
          <MultiSelect
            label="Lead status"
            data={[...STATUSES]}
            value={status}
            onChange={setStatus}
            placeholder="Any status"
          />
          {can('campaigns:view') && (
            <Select
              label="Campaign"
              placeholder="Any campaign"
              data={campaigns.data ?? []}
              value={campaignId}
              onChange={setCampaignId}
              searchable
              clearable
            />
          )}
          <Select
            label="Date"
            data={DATE_TYPES}
            value={dateType}
            onChange={(v) => setDateType(v ?? 'status_updated')}
            allowDeselect={false}
          />
          <NumberInput
            label="In the last (days)"
            description="Counted back from each run"
            min={1}
            max={365}
            value={lastDays}
            onChange={setLastDays}
          />
        </SimpleGrid>
        <Text data-testid="rule-preview-count" aria-live="polite" fw={500}>
          {preview.isError
            ? problemText(preview.error)
            : count === undefined
              ? 'Counting the leads these filters select…'
              : `${count.toLocaleString()} ${count === 1 ? 'lead' : 'leads'} would be taken if the rule ran now.`}
        </Text>
        <SegmentedControl
          aria-label="Send to"
          value={kind}
          onChange={setKind}
          data={[
            ...(can('flows:view') ? [{ value: 'flow', label: 'A flow' }] : []),
            ...(can('partners:view') ? [{ value: 'partners', label: 'Partners' }] : []),
          ]}
        />
        {kind === 'flow' ? (
          <Select
            label="Send through flow"
            placeholder="Choose a flow"
            data={flows.data ?? []}
            value={flowId}
            onChange={setFlowId}
            searchable
          />
        ) : (
          <MultiSelect
            label="Offer to partners, in this order"
            placeholder="Choose partners"
            data={partners.data ?? []}
            value={partnerIds}
            onChange={setPartnerIds}
            searchable
          />
        )}
        <SimpleGrid cols={{ base: 1, sm: 2 }}>
          <TimezoneSelect value={timeZone} onChange={setTimeZone} />
          <TextInput
            label="At (HH:MM)"
            value={at}
            onChange={(e) => setAt(e.currentTarget.value)}
            error={HHMM.test(at) ? undefined : 'A time such as 10:00'}
          />
        </SimpleGrid>
        <Checkbox.Group label="On" value={days} onChange={setDays}>
          <Group gap="xs" mt={4}>
            {WEEKDAYS.map(([d, label]) => (
              <Checkbox key={d} value={d} label={label} />
            ))}
          </Group>
        </Checkbox.Group>
        <NumberInput label="Leads per minute" min={1} max={10_000} value={perMinute} onChange={setPerMinute} />
        <Switch
          label="Send only within open hours (in the rule's time zone)"
          checked={hours}
          onChange={(e) => setHours(e.currentTarget.checked)}
        />
        {hours && (
          <SimpleGrid cols={2}>
            <TextInput
              label="Open from"
              value={open.from}
              onChange={(e) => setOpen({ ...open, from: e.currentTarget.value })}
            />
            <TextInput
              label="Open until"
              value={open.to}
              onChange={(e) => setOpen({ ...open, to: e.currentTarget.value })}
            />
          </SimpleGrid>
        )}
        <Switch
          label="Also offer leads to partners that were offered them before"
          checked={reoffer}
          onChange={(e) => setReoffer(e.currentTarget.checked)}
        />
        {save.isError && (
          <Alert color="red" role="alert">
            {problemText(save.error)}
          </Alert>
        )}
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button onClick={() => save.mutate()} loading={save.isPending} disabled={!ready}>
            Save rule
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
