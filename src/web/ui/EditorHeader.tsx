import { Alert, Button, Group, List, Title } from '@mantine/core';
import type { ReactNode } from 'react';

interface Props {
  title: string;
  /** Prefix of the test ids: `${testId}-saved`, `${testId}-errors`. */
  testId: string;
  /** Buttons before Save, for an existing item: rotate, delete… */
  actions?: ReactNode;
  onSave: () => void;
  saving: boolean;
  canEdit: boolean;
  saved: boolean;
  savedText?: string;
  /** The refusal (useEditorForm's `problem`), and optionally every field message under it. */
  problem: string | null;
  summary?: string[];
  /** Notes between the title and the outcome: archived, view only… */
  children?: ReactNode;
}

/** The top of every editor: title, actions and Save, then its notes, "Saved" or the refusal. */
export function EditorHeader({
  title,
  testId,
  actions,
  onSave,
  saving,
  canEdit,
  saved,
  savedText = 'Saved.',
  problem,
  summary = [],
  children,
}: Props) {
  return (
    <>
      <Group justify="space-between">
        <Title order={1} size="h2">
          {title}
        </Title>
        <Group>
          {actions}
          <Button onClick={onSave} loading={saving} disabled={!canEdit}>
            Save
          </Button>
        </Group>
      </Group>
      {children}
      {saved && (
        <Alert color="green" data-testid={`${testId}-saved`}>
          {savedText}
        </Alert>
      )}
      {problem && (
        <Alert color="red" role="alert" title={problem} data-testid={`${testId}-errors`}>
          {summary.length > 0 && (
            <List size="sm">
              {summary.map((s) => (
                <List.Item key={s}>{s}</List.Item>
              ))}
            </List>
          )}
        </Alert>
      )}
    </>
  );
}
