// Family adapters: each fits one learner on the prepared training matrix and predicts the evaluation
// sets (class index or value). Hyperparameters a program leaves out take LEARNER_DEFAULTS. The budget
// option does not change the computation: it is the CPU-time limit the executor enforces (proposal.ts).
// Classifier labels are compacted to the classes present in training (several mljs learners assume
// labels 0..n-1) and mapped back.
import { DecisionTreeClassifier, DecisionTreeRegression } from 'ml-cart';
import KNN from 'ml-knn';
import LogisticRegression from 'ml-logistic-regression';
import { Matrix } from 'ml-matrix';
import { GaussianNB } from 'ml-naivebayes';
import { RandomForestClassifier, RandomForestRegression } from 'ml-random-forest';
import MultivariateLinearRegression from 'ml-regression-multivariate-linear';
import type { Family, ParamKey, Program } from './dsl.ts';
import { fitPredictMlp } from './mlp.ts';
import type { TaskKind } from './tasks.ts';

/** Values used where a program names no value for a hyperparameter its family takes. */
export const LEARNER_DEFAULTS: Record<ParamKey, number> = {
  depth: 8,
  trees: 50,
  k: 5,
  hidden: 64,
  layers: 2,
  epochs: 100,
  lr: 0.01,
};

export interface LearnerInput {
  kind: TaskKind;
  /** Classes of the task (0 for regression). */
  classes: number;
  seed: number;
  x: number[][];
  y: number[];
  evals: number[][][];
}

type Resolved = Record<ParamKey, number>;
type Adapter = (d: LearnerInput, p: Resolved) => number[][] | Promise<number[][]>;

/** The program's hyperparameters with defaults filled in (never capped: huge values just take long). */
export function resolveParams(program: Program): Resolved {
  return { ...LEARNER_DEFAULTS, ...stripUndefined(program.params) };
}

function stripUndefined(o: Partial<Resolved>): Partial<Resolved> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

/** Classification labels as 0..m-1 over the classes present in `y`; `back` maps a prediction to the task's class. */
function compact(y: readonly number[]): { y: number[]; back: (k: number) => number; count: number } {
  const present = [...new Set(y)].sort((a, b) => a - b);
  const index = new Map(present.map((c, i) => [c, i]));
  return { y: y.map((c) => index.get(c)!), back: (k) => present[k] ?? present[0], count: present.length };
}

function classifier(
  train: (x: number[][], y: number[], count: number, d: LearnerInput, p: Resolved) => (x: number[][]) => number[],
): Adapter {
  return (d, p) => {
    const c = compact(d.y);
    const predict = train(d.x, c.y, c.count, d, p);
    return d.evals.map((e) => predict(e).map(c.back));
  };
}

const tree: Adapter = (d, p) => {
  const m =
    d.kind === 'classification'
      ? new DecisionTreeClassifier({ maxDepth: p.depth })
      : new DecisionTreeRegression({ maxDepth: p.depth });
  if (d.kind === 'classification')
    return classifier((x, y) => {
      m.train(x, y);
      return (e) => m.predict(e);
    })(d, p);
  m.train(d.x, d.y);
  return d.evals.map((e) => m.predict(e));
};

/** Features per tree: without replacement, about 70% of them (the library samples once per tree, not per split). */
function forestOptions(d: LearnerInput, p: Resolved): ConstructorParameters<typeof RandomForestRegression>[0] {
  const cols = d.x[0].length;
  return {
    nEstimators: p.trees,
    maxFeatures: Math.max(1, Math.ceil(0.7 * cols)),
    replacement: false,
    seed: d.seed | 0,
    useSampleBagging: true,
    noOOB: true,
    treeOptions: { maxDepth: p.depth },
  };
}

const forest: Adapter = (d, p) => {
  if (d.kind === 'classification') {
    return classifier((x, y) => {
      const m = new RandomForestClassifier(forestOptions(d, p));
      m.train(x, y);
      return (e) => m.predict(e);
    })(d, p);
  }
  const m = new RandomForestRegression(forestOptions(d, p));
  m.train(d.x, d.y);
  return d.evals.map((e) => m.predict(e));
};

/** ml-knn votes; for regression the same k-d tree's neighbours are averaged. */
const knn: Adapter = (d, p) => {
  if (d.kind === 'classification')
    return classifier((x, y) => {
      const m = new KNN(x, y, { k: p.k });
      return (e) => m.predict(e);
    })(d, p);
  const m = new KNN(d.x, d.y, { k: p.k });
  return d.evals.map((e) =>
    e.map((row) => {
      const near = m.kdTree.nearest(row, p.k);
      return near.reduce((s, [pt]) => s + pt[pt.length - 1], 0) / near.length;
    }),
  );
};

/** ml-naivebayes fits the class means and deviations; prediction is redone here in log space with
 *  sklearn's variance smoothing: the library multiplies densities (so rows far from every class get
 *  class -1) and divides by zero for a feature that is constant within a class. */
const bayes: Adapter = classifier((x, y) => {
  const m = new GaussianNB();
  m.train(x, y);
  const cols = x[0].length;
  const eps = 1e-9 * Math.max(...Array.from({ length: cols }, (_, j) => variance(x.map((r) => r[j]))), 1e-12);
  const classes = m.calculateProbabilities.map((cp, c) => ({
    prior: cp[0],
    mean: m.means[c],
    vars: (cp.slice(1) as [number, number][]).map(([, c2]) => -c2 / 2 + eps),
  }));
  return (e) =>
    e.map((row) => {
      let best = 0;
      let bestScore = -Infinity;
      classes.forEach((k, c) => {
        let s = k.prior;
        for (let j = 0; j < cols; j++)
          s -= 0.5 * (Math.log(2 * Math.PI * k.vars[j]) + (row[j] - k.mean[j]) ** 2 / k.vars[j]);
        if (s > bestScore) {
          bestScore = s;
          best = c;
        }
      });
      return best;
    });
});

function variance(xs: readonly number[]): number {
  const m = xs.reduce((a, b) => a + b, 0) / xs.length;
  return xs.reduce((s, v) => s + (v - m) ** 2, 0) / xs.length;
}

/** One-vs-rest gradient ascent; the library fits no intercept, so a constant column is appended. */
const logistic: Adapter = classifier((x, y, _count, _d, p) => {
  const m = new LogisticRegression({ numSteps: p.epochs, learningRate: p.lr });
  const withOne = (rows: number[][]): Matrix => new Matrix(rows.map((r) => [...r, 1]));
  m.train(withOne(x), Matrix.columnVector(y));
  return (e) => m.predict(withOne(e));
});

const linear: Adapter = (d) => {
  const m = new MultivariateLinearRegression(
    d.x,
    d.y.map((v) => [v]),
    { statistics: false },
  );
  return d.evals.map((e) => m.predict(e).map((r) => r[0]));
};

const mlpAdapter: Adapter = (d, p) =>
  fitPredictMlp(d.x, d.y, d.evals, {
    hidden: p.hidden,
    layers: p.layers,
    epochs: p.epochs,
    lr: p.lr,
    classes: d.classes,
    seed: d.seed,
  });

const ADAPTERS: Record<Family, Adapter> = { mlp: mlpAdapter, tree, forest, knn, bayes, logistic, linear };

/** Fits `family` on (x, y) and returns the predictions for each evaluation set. */
export async function fitPredict(family: Family, params: Resolved, d: LearnerInput): Promise<number[][]> {
  return ADAPTERS[family](d, params);
}
