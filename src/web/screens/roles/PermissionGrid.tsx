import { Checkbox, Table, Text } from '@mantine/core';
import type { paths } from '../../api/schema';
import { usePhone } from '../../ui/TableBox';

export type Catalog = paths['/api/permissions']['get']['responses'][200]['content']['application/json'];
type Module = Catalog['modules'][number];

interface Props {
  catalog: Catalog;
  value: string[];
  onChange: (permissions: string[]) => void;
  /** The operator's own permissions: the API refuses to grant any other, so those are not offered. */
  held: ReadonlySet<string>;
  readOnly: boolean;
  error?: string;
}

const title = (action: string) => action.charAt(0).toUpperCase() + action.slice(1);

/** Permissions as a module × action grid; a module's or an action's box toggles its whole row or column. */
export function PermissionGrid({ catalog, value, onChange, held, readOnly, error }: Props) {
  // Columns in the order actions first appear (view, edit, contacts): not every module has each.
  const actions = [...new Set(catalog.modules.flatMap((m) => m.actions.map((a) => a.action)))];
  const selected = new Set(value);
  // On a phone the cells hug their boxes so that the grid fits the screen.
  const spacing = usePhone() ? 6 : undefined;

  /** A box over several permissions: ticked when all grantable ones are, toggling only those. */
  function groupBox(permissions: string[], label: string, ariaLabel: string) {
    const grantable = permissions.filter((p) => held.has(p));
    const on = grantable.filter((p) => selected.has(p)).length;
    const all = grantable.length > 0 && on === grantable.length;
    const toggle = () => {
      const next = new Set(selected);
      for (const p of grantable) {
        if (all) next.delete(p);
        else next.add(p);
      }
      onChange(catalog.permissions.filter((p) => next.has(p)));
    };
    return (
      <Checkbox
        label={label}
        aria-label={ariaLabel}
        checked={all}
        indeterminate={on > 0 && !all}
        disabled={readOnly || grantable.length === 0}
        onChange={toggle}
      />
    );
  }

  const cell = (m: Module, action: string) => {
    const a = m.actions.find((x) => x.action === action);
    if (!a) return <Text c="dimmed">—</Text>;
    return (
      <Checkbox
        aria-label={`${m.label}: ${action}`}
        title={
          held.has(a.permission)
            ? a.description
            : `${a.description} (you do not hold this permission, so you cannot grant it)`
        }
        checked={selected.has(a.permission)}
        disabled={readOnly || !held.has(a.permission)}
        onChange={(e) => {
          const on = e.currentTarget.checked;
          onChange(catalog.permissions.filter((p) => (p === a.permission ? on : selected.has(p))));
        }}
      />
    );
  };

  return (
    <div>
      <Table withTableBorder w="auto" horizontalSpacing={spacing} data-testid="permission-grid">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Module</Table.Th>
            {actions.map((action) => (
              <Table.Th key={action}>
                {groupBox(
                  catalog.modules.flatMap((m) => m.actions.filter((a) => a.action === action).map((a) => a.permission)),
                  title(action),
                  `${title(action)}: every module`,
                )}
              </Table.Th>
            ))}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {catalog.modules.map((m) => (
            <Table.Tr key={m.module} data-testid="permission-row">
              <Table.Td>
                {groupBox(
                  m.actions.map((a) => a.permission),
                  m.label,
                  `${m.label}: every action`,
                )}
              </Table.Td>
              {actions.map((action) => (
                <Table.Td key={action}>{cell(m, action)}</Table.Td>
              ))}
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {error && (
        <Text c="red" size="sm" mt={4} role="alert">
          {error}
        </Text>
      )}
    </div>
  );
}
