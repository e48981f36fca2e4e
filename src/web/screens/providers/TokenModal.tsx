import { Alert, Button, Code, Group, Modal, Stack, Text } from '@mantine/core';
import { LocalLinkNote } from '../../ui/LocalLinkNote';
import { CopyValueButton } from '../../ui/CopyValueButton';

export interface ShownToken {
  name: string;
  token: string;
  /** From the API: under the hosting panel's public base URL, or a path on this dashboard's address. */
  intakeUrl: string;
}

/** The intake token, shown once after creating a provider or rotating its token. */
export function TokenModal({ shown, onClose }: { shown: ShownToken | null; onClose: () => void }) {
  const curl = shown
    ? [
        `curl -X POST ${new URL(shown.intakeUrl, window.location.origin).href} \\`,
        `  -H 'Authorization: Bearer ${shown.token}' \\`,
        `  -H 'Content-Type: application/json' \\`,
        `  -d '{"first_name":"Ada","last_name":"Lovelace","email":"ada@example.com","phone":"+4915123456789","country":"DE","ip":"203.0.113.7"}'`,
      ].join('\n')
    : '';
  return (
    <Modal opened={shown !== null} onClose={onClose} title="Intake token" size="xl" closeOnClickOutside={false}>
      {shown && (
        <Stack>
          <Alert color="orange" title="Copy this token now">
            This is the only time the intake token of “{shown.name}” is shown. Give it to the traffic provider over a
            safe channel; if it is lost, rotate the token and send the new one.
          </Alert>
          <Code block style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-all' }} data-testid="provider-token">
            {shown.token}
          </Code>
          <Group justify="flex-end">
            <CopyValueButton value={shown.token} />
          </Group>
          <Text size="sm">The provider posts each lead like this:</Text>
          <LocalLinkNote link={shown.intakeUrl} who="the provider" />
          <Code block style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-all' }}>
            {curl}
          </Code>
          <Group justify="flex-end">
            <Button onClick={onClose}>Done</Button>
          </Group>
        </Stack>
      )}
    </Modal>
  );
}
