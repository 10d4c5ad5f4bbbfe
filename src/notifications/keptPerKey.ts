/**
 * A value per key, computed once and kept: for what every email asks again with one of a few keys (a locale tag
 * from mail_recipient or MAIL_LOCALE). Past `size` keys it starts over, so a stray variety of keys cannot grow it.
 */
export function keptPerKey<V>(size: number): (key: string, compute: () => V) => V {
  const kept = new Map<string, V>();
  return (key, compute) => {
    if (kept.has(key)) return kept.get(key) as V;
    if (kept.size >= size) kept.clear();
    const value = compute();
    kept.set(key, value);
    return value;
  };
}
