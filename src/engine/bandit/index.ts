/** Tier 3 (Autopilot) bandit: pure math, no I/O. See each file for the reasoning. */
export * from './config.js';
export * from './posterior.js';
export * from './sampling.js';
export * from './waterfill.js';
export * from './arms.js';
export * from './allocate.js';
export * from './change.js';
export * from './risk.js';
export * from './rows.js';
