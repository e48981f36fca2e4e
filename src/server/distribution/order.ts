// The order a lead's candidates are tried in: priority ascending (lower first); within one
// priority, a weighted random permutation (Efraimidis–Spirakis: each item draws the key
// -ln(u) / weight, an exponential variable with rate `weight`, and the smallest key goes first),
// so the first pick is proportional to weight, the next among the rest likewise, and so on.

export function tryOrder<T extends { priority: number; weight: number }>(
  items: T[],
  random: () => number = Math.random,
): T[] {
  return (
    items
      // 1 - random() lies in (0, 1]: never log(0).
      .map((item) => ({ item, key: -Math.log(1 - random()) / item.weight }))
      .sort((a, b) => a.item.priority - b.item.priority || a.key - b.key)
      .map((k) => k.item)
  );
}
