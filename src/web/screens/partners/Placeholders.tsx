import { Code, Group, Text, Tooltip, UnstyledButton } from '@mantine/core';
import { useSampleLead } from './sampleLead';

/**
 * Every placeholder a body template or URL may use, each inserted with a click where the cursor
 * was in the request editor (`onInsert`); its sample value on hover.
 */
export function Placeholders({ onInsert, into }: { onInsert: (placeholder: string) => void; into: string }) {
  const sample = useSampleLead();
  if (!sample.data) return null;
  return (
    <Group gap={6} data-testid="template-placeholders" aria-label="Template placeholders">
      <Text size="xs" c="dimmed">
        Placeholders (click to insert into the {into}):
      </Text>
      {sample.data.placeholders.map((p) => (
        <Tooltip key={p.field} label={`Test lead: ${p.example ?? '(empty)'}`} withArrow>
          <UnstyledButton
            // Keeps the focus (and the cursor) in the field being edited.
            onMouseDown={(e) => e.preventDefault()}
            onClick={() => onInsert(p.placeholder)}
            aria-label={`Insert ${p.placeholder}`}
          >
            <Code>{p.placeholder}</Code>
          </UnstyledButton>
        </Tooltip>
      ))}
    </Group>
  );
}
