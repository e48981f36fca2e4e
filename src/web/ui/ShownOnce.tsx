import { Alert, Button, Code, Group, Stack } from '@mantine/core';
import type { ReactNode } from 'react';
import { CopyValueButton } from './CopyValueButton';

/**
 * A secret (a key, a signing secret, an invitation link) shown the one time the server answers
 * it: what it is and what to do if it is lost, the value, anything to add, Copy and Done.
 */
export function ShownOnce(props: {
  title: string;
  message: ReactNode;
  value: string;
  testId: string;
  onDone: () => void;
  children?: ReactNode;
}) {
  return (
    <Stack>
      <Alert color="orange" title={props.title}>
        {props.message}
      </Alert>
      <Code block style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-all' }} data-testid={props.testId}>
        {props.value}
      </Code>
      {props.children}
      <Group justify="flex-end">
        <CopyValueButton value={props.value} />
        <Button onClick={props.onDone}>Done</Button>
      </Group>
    </Stack>
  );
}
