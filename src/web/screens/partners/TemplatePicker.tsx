import { Button, Card, Code, Collapse, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, must } from '../../api/client';
import { ErrorAlert } from '../../ui/EditorPage';
import type { PartnerTemplate } from './form';

/**
 * For a new partner: ready integrations for the common broker APIs (GET /api/partners/templates).
 * One click fills the integration; the operator then gives the URL and the token, and can edit the
 * rest as any integration.
 */
export function TemplatePicker({ onPick }: { onPick: (t: PartnerTemplate) => void }) {
  const templates = useQuery({
    queryKey: ['partner-templates'],
    queryFn: async () => must(await api.GET('/api/partners/templates')),
    staleTime: Infinity,
  });
  const [picked, setPicked] = useState<PartnerTemplate | null>(null);
  if (templates.isError) return <ErrorAlert error={templates.error} />;
  if (!templates.data) return null;
  return (
    <Card withBorder data-testid="partner-templates">
      <Title order={2} size="h4">
        Start from a template
      </Title>
      <Text size="sm" c="dimmed" mb="sm">
        The usual broker API shapes, with the field names their CRMs use. Pick one, then give the partner&apos;s URL and
        API token below; everything else can be changed.
      </Text>
      <SimpleGrid cols={{ base: 1, sm: 3 }}>
        {templates.data.data.map((t) => (
          <Stack key={t.id} gap={4}>
            <Button
              variant={picked?.id === t.id ? 'filled' : 'default'}
              onClick={() => {
                setPicked(t);
                onPick(t);
              }}
              aria-pressed={picked?.id === t.id}
              styles={{ label: { whiteSpace: 'normal' } }}
              h="auto"
              py={6}
            >
              {t.name}
            </Button>
            <Text size="xs" c="dimmed">
              {t.description}
            </Text>
          </Stack>
        ))}
      </SimpleGrid>
      <Collapse in={picked !== null}>
        {picked && (
          <Stack gap={4} mt="sm" data-testid="picked-template">
            <Text size="sm">
              Now fill in the URL and the value of the <Code>{picked.auth_header}</Code> header (the partner&apos;s API
              token). The partner answers an accepted lead like this:
            </Text>
            <Code block style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-all' }}>
              {picked.answer_example}
            </Code>
          </Stack>
        )}
      </Collapse>
    </Card>
  );
}
