import type { App } from '../../types.js';

export default async function flowsRoutes(_app: App) {}
