import type { App } from '../../types.js';

export default async function analyticsRoutes(_app: App) {}
