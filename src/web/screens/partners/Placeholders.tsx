import { Code, CopyButton, Group, Text, Tooltip, UnstyledButton } from '@mantine/core';
import { useSampleLead } from './sampleLead';

/** Every placeholder a body template or URL may use, each copied with a click; its sample value on hover. */
export function Placeholders() {
  const sample = useSampleLead();
  if (!sample.data) return null;
  return (
    <Group gap={6} data-testid="template-placeholders" aria-label="Template placeholders">
      <Text size="xs" c="dimmed">
        Placeholders (click to copy):
      </Text>
      {sample.data.placeholders.map((p) => (
        <CopyButton key={p.field} value={p.placeholder}>
          {({ copied, copy }) => (
            <Tooltip label={copied ? 'Copied' : `Test lead: ${p.example ?? '(empty)'}`} withArrow>
              <UnstyledButton onClick={copy} aria-label={`Copy ${p.placeholder}`}>
                <Code>{p.placeholder}</Code>
              </UnstyledButton>
            </Tooltip>
          )}
        </CopyButton>
      ))}
    </Group>
  );
}
