// The provider editor's "Velocity limits": a window typed as a number and a unit (sent as
// minutes) and three optional limits. Like the rest of the editor, nothing is checked here: the
// API's messages come back to these inputs (`velocity.window_minutes`, `velocity.ip`, …).
import { NativeSelect, NumberInput, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { useId } from 'react';
import type { paths } from '../../api/schema';
import type { FieldErrors } from '../../ui/fields';

type Velocity =
  paths['/api/traffic-providers/{id}']['get']['responses'][200]['content']['application/json']['velocity'];
type Unit = 'minutes' | 'hours' | 'days';

const MINUTES: Record<Unit, number> = { minutes: 1, hours: 60, days: 24 * 60 };
const LIMITS = [
  { key: 'velocity_ip', field: 'ip', label: 'Same IP address' },
  { key: 'velocity_phone', field: 'phone', label: 'Same phone number' },
  { key: 'velocity_email_domain', field: 'email_domain', label: 'Same email domain' },
] as const;

/** The section's part of the editor's form; a limit of '' means no limit. */
export interface VelocityForm {
  velocity_window: number | string;
  velocity_unit: Unit;
  velocity_ip: number | string;
  velocity_phone: number | string;
  velocity_email_domain: number | string;
}

const OFF: Velocity = { window_minutes: 60, ip: null, phone: null, email_domain: null };

/** A stored policy in the largest unit that holds its window whole (60 → 1 hour, 90 → 90 minutes). */
export function velocityFormOf(v: Velocity | undefined): VelocityForm {
  const p = v ?? OFF;
  const unit: Unit =
    p.window_minutes % MINUTES.days === 0 ? 'days' : p.window_minutes % MINUTES.hours === 0 ? 'hours' : 'minutes';
  return {
    velocity_window: p.window_minutes / MINUTES[unit],
    velocity_unit: unit,
    velocity_ip: p.ip ?? '',
    velocity_phone: p.phone ?? '',
    velocity_email_domain: p.email_domain ?? '',
  };
}

const limitOf = (v: number | string) => (v === '' ? null : Number(v));

/** The API's `velocity` (replaced whole); a cleared window goes as null, so the API names the field. */
export function velocityBody(f: VelocityForm): Velocity {
  return {
    window_minutes:
      f.velocity_window === '' ? (null as unknown as number) : Number(f.velocity_window) * MINUTES[f.velocity_unit],
    ip: limitOf(f.velocity_ip),
    phone: limitOf(f.velocity_phone),
    email_domain: limitOf(f.velocity_email_domain),
  };
}

/** The API field a form key of this section is shown at; undefined for the editor's other keys. */
export function velocityInput(key: string): string | undefined {
  if (key === 'velocity_window' || key === 'velocity_unit') return 'velocity.window_minutes';
  const limit = LIMITS.find((l) => l.key === key);
  return limit && `velocity.${limit.field}`;
}

/** The section's inputs in the words of their labels, for the editor's `fieldErrors`. */
export const VELOCITY_LABELS: Record<string, string> = {
  velocity: 'Velocity limits',
  'velocity.window_minutes': 'Velocity window',
  ...Object.fromEntries(LIMITS.map((l) => [`velocity.${l.field}`, `Velocity limit, ${l.label.toLowerCase()}`])),
};

// The unit select sits at the right end of the window's box (Mantine's pattern of an amount and its currency).
const UNIT_WIDTH = 96;

export function VelocitySection({
  form,
  set,
  errors,
}: {
  form: VelocityForm;
  set: (patch: Partial<VelocityForm>) => void;
  errors: FieldErrors;
}) {
  const limitsId = useId();
  return (
    <>
      <Title order={2} size="h4">
        Velocity limits
      </Title>
      <Text size="sm" c="dimmed">
        Counts this provider&apos;s own leads. A lead that reaches a limit is still accepted and routed, but carries a
        flag (<code>velocity_ip</code>, <code>velocity_phone</code> or <code>velocity_email_domain</code>) whose weight
        is taken off its quality score. All three limits empty: no velocity check.
      </Text>
      <NumberInput
        label="Velocity window"
        description="How far back to count: 1 minute to 7 days (10,080 minutes)"
        value={form.velocity_window}
        onChange={(v) => set({ velocity_window: v })}
        allowDecimal={false}
        min={1}
        error={errors.at('velocity.window_minutes')}
        w={260}
        rightSection={
          <NativeSelect
            aria-label="Window unit"
            data={[
              { value: 'minutes', label: 'minutes' },
              { value: 'hours', label: 'hours' },
              { value: 'days', label: 'days' },
            ]}
            value={form.velocity_unit}
            onChange={(e) => set({ velocity_unit: e.currentTarget.value as Unit })}
            rightSectionWidth={28}
            // Fills the number's right end, split from it by a line.
            styles={{
              root: { height: '100%' },
              wrapper: { height: '100%', margin: 0 },
              input: {
                height: '100%',
                minHeight: 0,
                width: UNIT_WIDTH,
                fontWeight: 500,
                border: 0,
                borderLeft: '1px solid var(--mantine-color-default-border)',
                borderRadius: 0,
                background: 'transparent',
              },
            }}
          />
        }
        rightSectionWidth={UNIT_WIDTH}
        rightSectionPointerEvents="all"
      />
      <Stack gap={4} role="group" aria-labelledby={limitsId}>
        <Text size="sm" fw={500} id={limitsId}>
          Flag a lead when this many earlier leads in the window came from the same…
        </Text>
        <Text size="xs" c="dimmed">
          E.g. 2: the third lead from one IP address within the window is flagged. Empty: no limit.
        </Text>
        <SimpleGrid cols={{ base: 1, xs: 3 }} spacing="xs">
          {LIMITS.map((l) => (
            <NumberInput
              key={l.key}
              label={l.label}
              placeholder="No limit"
              value={form[l.key]}
              onChange={(v) => set({ [l.key]: v })}
              allowDecimal={false}
              min={1}
              error={errors.at(`velocity.${l.field}`)}
            />
          ))}
        </SimpleGrid>
      </Stack>
    </>
  );
}
