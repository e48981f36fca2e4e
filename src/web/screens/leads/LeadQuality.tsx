import { Badge, Group, Stack, Text } from '@mantine/core';
import { scoreColor } from '../quality/flags';
import { useFlagInfo } from '../quality/useFlagInfo';
import type { LeadDetail } from './filters';

/**
 * A lead's quality in its drawer: the score it was given on arrival (100 less the weights of its
 * flags then) and each fraud flag it raised, named and explained.
 */
export function LeadQuality({ lead }: { lead: Pick<LeadDetail, 'flags' | 'quality_score'> }) {
  const flagInfo = useFlagInfo();
  const score = lead.quality_score;
  return (
    <Stack gap={6} data-testid="lead-quality">
      <Group gap="xs">
        <Text size="sm" fw={500}>
          Quality score
        </Text>
        <Badge variant="light" color={scoreColor(score)} data-testid="lead-score">
          {score === null ? 'not scored' : `${score} / 100`}
        </Badge>
      </Group>
      {score === null && lead.flags.length === 0 ? (
        <Text size="sm" c="dimmed">
          Stored before leads were scored: no fraud flags were computed.
        </Text>
      ) : lead.flags.length === 0 ? (
        <Text size="sm" c="dimmed" data-testid="lead-no-flags">
          No fraud flags raised.
        </Text>
      ) : (
        <Stack gap={6} component="ul" style={{ listStyle: 'none', margin: 0, padding: 0 }} aria-label="Fraud flags">
          {lead.flags.map((f) => {
            const info = flagInfo(f);
            return (
              <li key={f} data-testid="lead-flag" data-flag={f}>
                <Badge variant="light" color="orange" data-testid="lead-flag-label">
                  {info.label}
                </Badge>
                {info.description && (
                  <Text size="xs" c="dimmed" mt={2}>
                    {info.description}
                  </Text>
                )}
              </li>
            );
          })}
        </Stack>
      )}
    </Stack>
  );
}
