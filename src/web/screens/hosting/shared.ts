/** The query key of everything on the hosting panel: invalidating it refreshes the facts and the backup list. */
export const HOSTING_KEY = ['hosting'];

/** 1536 → "1.5 KB": binary steps, as disks and memory are reported. */
export function formatBytes(n: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? v : v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

/** 93784 → "1 d 2 h 3 min". */
export function formatDuration(seconds: number): string {
  const d = Math.floor(seconds / 86400);
  const h = Math.floor((seconds % 86400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  if (d) return `${d} d ${h} h ${m} min`;
  if (h) return `${h} h ${m} min`;
  return m ? `${m} min` : `${seconds} s`;
}
