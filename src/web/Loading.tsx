import { Center, Loader } from '@mantine/core';

export function Loading() {
  return (
    <Center h={200}>
      {/* A span may not carry a name by itself (axe: aria-prohibited-attr): as a status it may. */}
      <Loader role="status" aria-label="Loading" />
    </Center>
  );
}
