import { describe, expect, it } from 'vitest';
import { runCli } from './helpers.ts';

describe('collect / pretrain / dagger / eval / teacher flag errors name the flag', () => {
  it.each([
    [['collect', '--out', '/tmp/x', '--episodes', '0'], /--episodes: must be >= 1/],
    [['collect', '--out', '/tmp/x', '--noise', '2'], /--noise: must be in \[0, 1\]/],
    [['collect', '--out', '/tmp/x', '--task', 'juggle'], /--task: unknown task "juggle"/],
    [['pretrain', '--data', '/tmp/x', '--out', 'model.pt'], /--out: must end in .onnx/],
    [['pretrain', '--data', '/tmp/x', '--out', 'm.onnx', '--lr', '-1'], /--lr: must be > 0/],
    [['pretrain', '--data', '/tmp/does-not-exist', '--out', '/tmp/m.onnx'], /does-not-exist/],
    [['pretrain', '--data', '/tmp/x', '--out', 'm.onnx', '--head', 'joint'], /--head: .*"autoregressive"/],
    [
      ['pretrain', '--data', '/tmp/x', '--out', 'm.onnx', '--second-encoder', 'heavy'],
      /--second-encoder: .*"shared"\|"light" \(got "heavy"\)/,
    ],
    [
      ['dagger', '--data', '/tmp/x', '--policy', 'p.onnx', '--out', 'm.onnx', '--head', 'joint'],
      /--head: .*"independent"\|"autoregressive" \(got "joint"\)/,
    ],
    [['eval', '--policy', 'random', '--episodes', 'many'], /--episodes: /],
    [['eval', '--policy', 'random', '--temperature', '-1'], /--temperature: must be >= 0/],
    [['eval', '--policy', 'random', '--split', 'test'], /--split: /],
    [['eval', '--compare', 'random'], /--compare: takes exactly two policies/],
    [['eval', '--policy', 'nope'], /--policy: unknown policy "nope"/],
    [['eval', '--policy', 'models/missing.onnx'], /--policy: model file "models\/missing.onnx" does not exist/],
    [['eval'], /--policy: required/],
    [['teacher', '--episodes', '0'], /--episodes: must be >= 1/],
    [['teacher', '--split', 'test'], /--split: /],
    [['teacher', '--task', 'tabletop/nope'], /--task: unknown task/],
  ])('%j', async (args, message) => {
    await expect(runCli(args)).rejects.toThrow(message);
  });
});
