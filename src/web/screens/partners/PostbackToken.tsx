import { Alert, Button, Code, Group, Stack, Text } from '@mantine/core';
import { useState } from 'react';
import { api, must } from '../../api/client';
import { ConfirmDialog } from '../../ui/ConfirmDialog';
import { LocalLinkNote } from '../../ui/LocalLinkNote';
import type { Partner } from './form';
import { CopyValueButton } from '../../ui/CopyValueButton';

/** The postback URL with the secret token: in the create answer only, so shown here just once. */
export function PostbackUrl({ path }: { path: string }) {
  // Absolute when the hosting panel has a public base URL set; else a path on this dashboard's address.
  const url = /^https?:\/\//.test(path) ? path : `${window.location.origin}${path}`;
  return (
    <Alert color="yellow" title="Postback URL: shown only once" data-testid="postback-url">
      <Stack gap="xs">
        <Text size="sm">
          Give this URL to the partner for conversions. It holds a secret token and will not be shown again; copy it
          now. If it is lost, use “Rotate postback token” to get a new one (the old URL stops working).
        </Text>
        <LocalLinkNote link={path} who="the partner" />
        <Group>
          <Code data-testid="postback-url-value">{url}</Code>
          <CopyValueButton value={url} size="xs" />
        </Group>
      </Stack>
    </Alert>
  );
}

/** A new postback token: the old URL stops working at once, so the dialog says so first. */
export function RotatePostbackToken({
  partner,
  disabled,
  onRotated,
}: {
  partner: Partner;
  disabled: boolean;
  onRotated: (path: string) => void;
}) {
  const [open, setOpen] = useState(false);
  async function rotate() {
    const rotated = must(
      await api.POST('/api/partners/{id}/rotate-postback-token', { params: { path: { id: partner.id } } }),
    );
    onRotated(rotated.postback_url);
    setOpen(false);
  }
  return (
    <>
      <Button variant="default" onClick={() => setOpen(true)} disabled={disabled}>
        Rotate postback token
      </Button>
      <ConfirmDialog
        opened={open}
        title="Rotate the postback token?"
        confirmLabel="Rotate postback token"
        onConfirm={rotate}
        onClose={() => setOpen(false)}
      >
        <Text size="sm">
          “{partner.name}” gets a new postback URL. Conversions sent to the old one are refused from now on, so give the
          partner the new URL right away.
        </Text>
      </ConfirmDialog>
    </>
  );
}
