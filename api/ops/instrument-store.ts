/**
 * The store, with each failed operation counted by driver (polyphony_store_errors_total). A
 * proxy rather than a change to the drivers: every method of every concern is covered,
 * including those added later, and the drivers stay free of metrics.
 */
import { StoreUnavailableError, type Store } from '../../storage/store.ts';

export function countStoreErrors(store: Store, driver: string, onError: (driver: string, kind: 'unavailable' | 'other') => void): Store {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const count = (error: unknown) => {
          onError(driver, error instanceof StoreUnavailableError ? 'unavailable' : 'other');
          throw error;
        };
        try {
          const result: unknown = (value as (...parameters: unknown[]) => unknown).apply(target, args);
          return result instanceof Promise ? result.catch(count) : result;
        } catch (error) {
          return count(error);
        }
      };
    },
  });
}
