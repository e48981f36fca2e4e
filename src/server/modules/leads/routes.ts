import type { App } from '../../types.js';

export default async function leadsRoutes(_app: App) {}
