import { ServiceError } from '@temporalio/client';
import { isDependencyDown } from '../../src/api/dependency-errors';

const grpcError = (code: number) => Object.assign(new Error(`${code} grpc`), { code });

describe('isDependencyDown: a 503, not a 500', () => {
  test('Temporal that cannot answer now: unavailable, past its deadline, overloaded', () => {
    for (const code of [4, 8, 14]) {
      expect(isDependencyDown(new ServiceError('Update-With-Start failed', { cause: grpcError(code) }))).toBe(true);
      // An Update-with-Start's operation error is rethrown as the raw gRPC error.
      expect(isDependencyDown(grpcError(code))).toBe(true);
    }
  });

  test('PostgreSQL unreachable or refusing connections', () => {
    expect(isDependencyDown(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isDependencyDown(Object.assign(new Error('too many clients'), { code: '53300' }))).toBe(true);
  });

  test('a refusal or a bug is not a dependency being down', () => {
    expect(isDependencyDown(new ServiceError('refused', { cause: grpcError(3) }))).toBe(false);
    expect(isDependencyDown(grpcError(6))).toBe(false);
    expect(isDependencyDown(new TypeError('x is undefined'))).toBe(false);
    expect(isDependencyDown(Object.assign(new Error('duplicate key'), { code: '23505' }))).toBe(false);
  });
});
