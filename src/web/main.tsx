import '@mantine/core/styles.css';
import { Badge, createTheme, Drawer, MantineProvider, Modal, Table, type CSSVariablesResolver } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { createBrowserRouter, RouterProvider } from 'react-router-dom';
import { App } from './App';
import { adoptViewAs } from './portal/viewAs';

// API errors are shown to the operator at once; retrying a 4xx would only delay the message.
const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false, refetchOnWindowFocus: false } } });

// Colours chosen for contrast (WCAG AA, 4.5:1, checked by axe-core in the browser tests): the
// primary shade 8 under white text, and dimmed text and light-variant labels one step darker
// than Mantine's defaults. Filled badges and buttons pick black or white text by the colour's
// luminance: 0.185 sits where both reach 4.5:1 (white on green 8 would be 3.4:1), and keeps white
// on red 8 (4.5:1).
const theme = createTheme({
  respectReducedMotion: true,
  primaryShade: 8,
  autoContrast: true,
  luminanceThreshold: 0.185,
  components: {
    // A badge is a status or a scope: shown whole, never cut to "AC…" by a narrow table column.
    Badge: Badge.extend({ styles: { root: { minWidth: 'max-content' } } }),
    // A table wider than the screen (on a phone) scrolls sideways in its box; the box takes focus
    // so that the arrow keys scroll it too, not only a mouse or a finger.
    TableScrollContainer: Table.ScrollContainer.extend({
      defaultProps: { scrollAreaProps: { viewportProps: { tabIndex: 0 } } },
    }),
    // The × of a dialog or a drawer is an icon: a screen reader needs its name.
    Modal: Modal.extend({ defaultProps: { closeButtonProps: { 'aria-label': 'Close' } } }),
    Drawer: Drawer.extend({ defaultProps: { closeButtonProps: { 'aria-label': 'Close' } } }),
    // Their title bar is a <header> in Mantine, a second `banner` landmark on the page (axe:
    // landmark-no-duplicate-banner, landmark-banner-is-top-level): a plain box instead; the dialog
    // is named by its title all the same.
    ModalHeader: { defaultProps: { component: 'div' } },
    DrawerHeader: { defaultProps: { component: 'div' } },
  },
});

// Light-variant labels stay at 4.5:1 on their tint even over a striped, hovered table row (red 9
// on a light red button in a grey row was 4.48:1); where Mantine's darkest shade falls short,
// a darker hex.
const cssVariablesResolver: CSSVariablesResolver = () => ({
  variables: {},
  light: {
    '--mantine-color-dimmed': 'var(--mantine-color-gray-7)',
    '--mantine-primary-color-light-color': 'var(--mantine-color-blue-9)',
    '--mantine-color-blue-light-color': 'var(--mantine-color-blue-9)',
    '--mantine-color-red-light-color': '#a61e1e',
    // An input's error message and its value while in error (Mantine's red 8 is 4.0:1 on white).
    '--mantine-color-error': '#a61e1e',
    '--mantine-color-green-light-color': '#1d6b2f',
    '--mantine-color-orange-light-color': '#8a3c00',
    '--mantine-color-yellow-light-color': '#6b4400',
    '--mantine-color-gray-light-color': 'var(--mantine-color-gray-8)',
    '--mantine-color-teal-light-color': '#066649',
    '--mantine-color-grape-light-color': 'var(--mantine-color-grape-9)',
    '--mantine-color-violet-light-color': 'var(--mantine-color-violet-9)',
    '--mantine-color-cyan-light-color': '#095c6b',
    '--mantine-color-indigo-light-color': 'var(--mantine-color-indigo-9)',
  },
  dark: {},
});

// A data router (the App keeps its own <Routes>) so editors can hold back a navigation that would
// lose unsaved changes (useBlocker needs one).
const router = createBrowserRouter([{ path: '*', element: <App /> }]);

adoptViewAs();
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <MantineProvider theme={theme} cssVariablesResolver={cssVariablesResolver}>
      <QueryClientProvider client={queryClient}>
        <RouterProvider router={router} />
      </QueryClientProvider>
    </MantineProvider>
  </StrictMode>,
);
