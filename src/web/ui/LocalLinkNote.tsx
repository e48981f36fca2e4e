import { Alert, Anchor, Text } from '@mantine/core';
import { Link } from 'react-router-dom';

/** Loopback, private and link-local hosts, and bare names: places a partner or provider on the internet cannot reach. */
const UNREACHABLE =
  /^(localhost|127\.|10\.|192\.168\.|172\.(1[6-9]|2\d|3[01])\.|169\.254\.|\[::1\]|\[f[cd]|\[fe80:|[^.]+$)/i;

/**
 * Said beside a link the API built without a public base URL (it answered a path, not a URL):
 * the link uses the address this dashboard is open on, which the other side may not reach.
 * `link`: what the API answered.
 */
export function LocalLinkNote({
  link,
  who,
  remake = 'rotate the token',
}: {
  link: string;
  who: string;
  /** How to get a new link once the base URL is set. */
  remake?: string;
}) {
  if (/^https?:\/\//.test(link)) return null;
  const unreachable = UNREACHABLE.test(window.location.hostname);
  return (
    <Alert color={unreachable ? 'red' : 'yellow'} data-testid="local-link-note" title="No public base URL is set">
      <Text size="sm">
        This link is built on the address you opened the dashboard with ({window.location.origin})
        {unreachable ? `, which ${who} cannot reach from the internet` : ''}. Set the public base URL under{' '}
        {/* A new tab: the secret shown once here must stay on screen. In the note's own colour, underlined:
            blue on its tint falls short of 4.5:1. */}
        <Anchor
          component={Link}
          to="/settings/hosting"
          target="_blank"
          rel="noopener"
          c="inherit"
          underline="always"
          data-testid="hosting-link"
        >
          Hosting
        </Anchor>{' '}
        first, then {remake} to get a link on it.
      </Text>
    </Alert>
  );
}
