// Local declarations of the mljs learners AutoResearch uses, only the parts it calls. ml-random-forest
// ships types that do not compile (a class extending an interface), and ambient declarations win
// over a package's own; the others ship none. ml-regression-multivariate-linear's own types are fine.

declare module 'ml-cart' {
  export interface TreeOptions {
    maxDepth?: number;
    minNumSamples?: number;
    gainThreshold?: number;
  }
  export class DecisionTreeClassifier {
    constructor(options?: TreeOptions);
    train(x: number[][], y: number[]): void;
    predict(x: number[][]): number[];
  }
  export class DecisionTreeRegression {
    constructor(options?: TreeOptions);
    train(x: number[][], y: number[]): void;
    predict(x: number[][]): number[];
  }
}

declare module 'ml-random-forest' {
  export interface ForestOptions {
    nEstimators?: number;
    /** An integer: features per tree; a float in (0, 1]: that share of them. */
    maxFeatures?: number;
    replacement?: boolean;
    seed?: number;
    useSampleBagging?: boolean;
    noOOB?: boolean;
    treeOptions?: import('ml-cart').TreeOptions;
    selectionMethod?: 'mean' | 'median';
  }
  export class RandomForestClassifier {
    constructor(options?: ForestOptions);
    train(x: number[][], y: number[]): void;
    predict(x: number[][]): number[];
  }
  export class RandomForestRegression {
    constructor(options?: ForestOptions);
    train(x: number[][], y: number[]): void;
    predict(x: number[][]): number[];
  }
}

declare module 'ml-knn' {
  export default class KNN {
    constructor(dataset: number[][], labels: number[], options?: { k?: number });
    predict(x: number[][]): number[];
    /** The k-d tree over the training rows; each point carries its label as an extra last entry. */
    kdTree: { nearest(point: number[], k: number): [number[], number][] };
  }
}

declare module 'ml-naivebayes' {
  export class GaussianNB {
    train(x: number[][], y: number[]): void;
    predict(x: number[][]): number[];
    /** Per class, the per-feature means. */
    means: number[][];
    /** Per class: [log prior, ...per feature [1 / (sqrt(2 pi) std), -2 std^2]]. */
    calculateProbabilities: [number, ...[number, number][]][];
  }
}

declare module 'ml-logistic-regression' {
  import type { Matrix } from 'ml-matrix';
  export default class LogisticRegression {
    constructor(options?: { numSteps?: number; learningRate?: number });
    train(x: Matrix, y: Matrix): void;
    predict(x: Matrix): number[];
  }
}
