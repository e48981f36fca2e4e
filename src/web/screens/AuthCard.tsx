import { Alert, Center, Paper, Stack, Title } from '@mantine/core';
import type { ReactNode } from 'react';

/** The frame of the signed-out screens (login, first-run setup). */
export function AuthCard({ title, error, children }: { title: string; error: string | null; children: ReactNode }) {
  return (
    <Center component="main" mih="100vh" p="md">
      <Paper withBorder shadow="sm" p="xl" w={380}>
        <Stack>
          <Title order={1} size="h2">
            {title}
          </Title>
          {error && (
            <Alert color="red" role="alert" data-testid="form-error">
              {error}
            </Alert>
          )}
          {children}
        </Stack>
      </Paper>
    </Center>
  );
}
