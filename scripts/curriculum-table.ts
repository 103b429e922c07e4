// Prints the ablation table of a curriculum study folder (scripts/curriculum-study.sh) as markdown, each
// row also paired with the first (none).
import { ablationTable, readStudy } from '../src/experiment/ablation.ts';

const dir = process.argv[2] ?? 'runs/curriculum';
const rows = (process.env.ROWS ?? 'none evolution relabel-pmi repeat all starts').split(' ');
const seeds = (process.env.SEEDS ?? '1 2 3').split(' ').map(Number);
const study = readStudy(dir, rows, seeds);
console.log(ablationTable(study.rows, study.base, rows[0]));
