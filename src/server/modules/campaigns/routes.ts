import type { App } from '../../types.js';

export default async function campaignsRoutes(_app: App) {}
