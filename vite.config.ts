// The dashboard SPA: sources in src/web, built to dist/web (served by the server at /), with
// content-hashed files under assets/ so they can be cached for good. `npm run dev` serves the
// API on :3000; the Vite dev (and preview) server forwards /api there, or to LEADGATE_API_URL.
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('./src/web', import.meta.url)),
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('./dist/web', import.meta.url)),
    emptyOutDir: true,
    assetsDir: 'assets',
  },
  server: {
    proxy: { '/api': process.env.LEADGATE_API_URL || 'http://127.0.0.1:3000' },
  },
});
