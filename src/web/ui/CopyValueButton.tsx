import { Button, CopyButton, type ButtonProps } from '@mantine/core';

/** "Copy" that says "Copied" for a moment: for ids, links, tokens and codes shown to be handed on. */
export function CopyValueButton({
  value,
  size,
  variant = 'light',
}: {
  value: string;
  size?: ButtonProps['size'];
  variant?: ButtonProps['variant'];
}) {
  return (
    <CopyButton value={value}>
      {({ copied, copy }) => (
        <Button size={size} variant={variant} onClick={copy} color={copied ? 'teal' : undefined}>
          {copied ? 'Copied' : 'Copy'}
        </Button>
      )}
    </CopyButton>
  );
}
