import type { App } from '../../types.js';

export default async function partnersRoutes(_app: App) {}
