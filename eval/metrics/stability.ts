/**
 * Election stability, after CallNavi's: a model asked the same item N times
 * (`--repeats N`) "elects" its most frequent answer; the item's stability is the share of
 * the N answers that are the elected one (1: always the same answer, 1/N: never twice the
 * same). Answers are compared by a key (e.g. the canonical JSON of the calls). The metric
 * is the mean over items.
 */
export function electionStability(answersPerItem: readonly (readonly string[])[]): number {
  const items = answersPerItem.filter((answers) => answers.length > 0);
  if (items.length === 0) return 0;
  const stability = (answers: readonly string[]) => {
    const counts = new Map<string, number>();
    for (const a of answers) counts.set(a, (counts.get(a) ?? 0) + 1);
    return Math.max(...counts.values()) / answers.length;
  };
  return items.reduce((sum, answers) => sum + stability(answers), 0) / items.length;
}
