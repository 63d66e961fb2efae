// The matcher's quality on a deterministic slice of the benchmark's evaluation (bench/screening-eval.ts;
// the full run is `npm run bench:screening`), printed as JSON for sanctions-matching.test.ts. A process
// of its own because inside jest's module sandbox the same screenings run several times slower.
import { buildPositives, negativeQueries } from '../../bench/screening-eval';
import { loadNegatives, loadReferenceEntities } from '../../bench/reference-lists';
import { SanctionsMatcher } from '../../src/sanctions/matcher';

async function main() {
  const entities = await loadReferenceEntities();
  const matcher = new SanctionsMatcher(entities, { threshold: 0.8, maxMatches: 10 });
  const positives = buildPositives(entities, 1000, 7);
  const found = positives.filter((p) => matcher.screen(p.query).some((m) => m.entity.id === p.expectedEntityId)).length;
  const negatives = negativeQueries(loadNegatives().slice(0, 5000));
  const falsePositives = negatives.filter((q) => matcher.screen(q).length > 0).length;
  process.stdout.write(JSON.stringify({ positives: positives.length, found, negatives: negatives.length, falsePositives }));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
