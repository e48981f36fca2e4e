import '@mantine/core/styles.css';
import { Badge, createTheme, MantineProvider } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { createBrowserRouter, RouterProvider } from 'react-router-dom';
import { App } from './App';

// API errors are shown to the operator at once; retrying a 4xx would only delay the message.
const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false, refetchOnWindowFocus: false } } });

const theme = createTheme({
  respectReducedMotion: true,
  components: {
    // A badge is a status or a scope: shown whole, never cut to "AC…" by a narrow table column.
    Badge: Badge.extend({ styles: { root: { minWidth: 'max-content' } } }),
  },
});

// A data router (the App keeps its own <Routes>) so editors can hold back a navigation that would
// lose unsaved changes (useBlocker needs one).
const router = createBrowserRouter([{ path: '*', element: <App /> }]);

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <MantineProvider theme={theme}>
      <QueryClientProvider client={queryClient}>
        <RouterProvider router={router} />
      </QueryClientProvider>
    </MantineProvider>
  </StrictMode>,
);
