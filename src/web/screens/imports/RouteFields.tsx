import { MultiSelect, NumberInput, SegmentedControl, Select, Stack } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { allOptions } from '../../ui/options';
import { useWhoami } from '../../whoami';

/** What an import does with its good rows: store them, or store them and send them by one re-injection job. */
export interface RouteChoice {
  mode: 'store' | 'route';
  kind: 'flow' | 'partners';
  flowId: string | null;
  partnerIds: string[];
  perMinute: number | string;
}

export const STORE_ONLY: RouteChoice = { mode: 'store', kind: 'flow', flowId: null, partnerIds: [], perMinute: 60 };

/** The run's body fields for the choice (POST /api/imports/{id}/run). */
export function routeBody(c: RouteChoice) {
  if (c.mode === 'store') return { mode: 'store' as const };
  return {
    mode: 'route' as const,
    ...(c.kind === 'flow' ? { flow_id: c.flowId ?? '' } : { partner_ids: c.partnerIds }),
    per_minute: Number(c.perMinute),
  };
}

/** Store only, or store and send through a flow or to partners at a pace (the job made when the import is done). */
export function RouteFields({ value, onChange }: { value: RouteChoice; onChange: (c: RouteChoice) => void }) {
  const permissions = useWhoami().data?.permissions ?? [];
  const can = (p: string) => permissions.includes(p as never);
  // A role that cannot read flows sends to partners (as in the re-injection rule's form).
  const kind = value.kind === 'flow' && !can('flows:view') && can('partners:view') ? 'partners' : value.kind;
  const set = (change: Partial<RouteChoice>) => onChange({ ...value, kind, ...change });
  const flows = useQuery({
    queryKey: ['options', '/api/flows'],
    enabled: value.mode === 'route' && can('flows:view'),
    queryFn: () => allOptions('/api/flows'),
  });
  const partners = useQuery({
    queryKey: ['options', '/api/partners'],
    enabled: value.mode === 'route' && can('partners:view'),
    queryFn: () => allOptions('/api/partners'),
  });
  return (
    <Stack gap="xs">
      <SegmentedControl
        aria-label="After the import"
        value={value.mode}
        onChange={(mode) => set({ mode: mode as RouteChoice['mode'] })}
        data={[
          { value: 'store', label: 'Store only' },
          { value: 'route', label: 'Store and send' },
        ]}
      />
      {value.mode === 'route' && (
        <>
          <SegmentedControl
            aria-label="Send to"
            value={kind}
            onChange={(k) => set({ kind: k as RouteChoice['kind'] })}
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
              value={value.flowId}
              onChange={(flowId) => set({ flowId })}
              searchable
            />
          ) : (
            <MultiSelect
              label="Offer to partners, in this order"
              placeholder="Choose partners"
              data={partners.data ?? []}
              value={value.partnerIds}
              onChange={(partnerIds) => set({ partnerIds })}
              searchable
            />
          )}
          <NumberInput
            label="Leads per minute"
            min={1}
            max={10_000}
            value={value.perMinute}
            onChange={(perMinute) => set({ perMinute })}
          />
        </>
      )}
    </Stack>
  );
}
