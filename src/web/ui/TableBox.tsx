import { Table, useMantineTheme } from '@mantine/core';
import { useMediaQuery } from '@mantine/hooks';
import type { ReactNode } from 'react';

/** True below Mantine's `sm` breakpoint (a phone), decided on the first render. */
export function usePhone(): boolean {
  const wide = useMediaQuery(`(min-width: ${useMantineTheme().breakpoints.sm})`, true, {
    getInitialValueInEffect: false,
  });
  return !wide;
}

/**
 * A table's box. From `sm` up the table keeps `minWidth` and scrolls sideways in its box when the
 * screen is narrower; on a phone it takes the screen's width, its secondary columns hidden there
 * (`visibleFrom="sm"` on their cells), so the key columns fit without scrolling.
 */
export function TableBox({ minWidth, children }: { minWidth: number; children: ReactNode }) {
  const phone = usePhone();
  return <Table.ScrollContainer minWidth={phone ? 0 : minWidth}>{children}</Table.ScrollContainer>;
}
