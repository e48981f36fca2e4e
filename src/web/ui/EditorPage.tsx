import { Alert, Anchor, Stack } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { Link, useParams } from 'react-router-dom';
import { problemText } from '../api/client';
import { Loading } from '../Loading';

interface Props<T> {
  /** Query key prefix of the one item, e.g. 'flow'; the id is appended. */
  queryKey: string;
  load: (id: string) => Promise<T>;
  back: { to: string; label: string };
  /** The form: `item` is null for `/…/new`. Keyed by id, so moving to another item starts afresh. */
  children: (item: T | null, id: string) => ReactNode;
}

/** The page around an editor at `/things/:id` (or `/things/new`): back link, loading, load error. */
export function EditorPage<T>({ queryKey, load, back, children }: Props<T>) {
  const id = useParams().id ?? 'new';
  const isNew = id === 'new';
  const item = useQuery({ queryKey: [queryKey, id], enabled: !isNew, queryFn: () => load(id) });

  let body: ReactNode;
  if (isNew) body = children(null, id);
  else if (item.isPending) body = <Loading />;
  else if (item.isError) body = <ErrorAlert error={item.error} />;
  else body = children(item.data, id);

  return (
    <Stack>
      <Anchor component={Link} to={back.to} size="sm">
        ← {back.label}
      </Anchor>
      {body}
    </Stack>
  );
}

/** An API error (or a network failure) as a readable message. */
export function ErrorAlert({ error }: { error: unknown }) {
  return (
    <Alert color="red" role="alert">
      {problemText(error)}
    </Alert>
  );
}
