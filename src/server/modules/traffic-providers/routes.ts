import type { App } from '../../types.js';

export default async function trafficProvidersRoutes(_app: App) {}
