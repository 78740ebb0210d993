/**
 * POST /v1/onboard: validate, generate, then create every rule in one atomic store write
 * (RuleService.createMany). If any generated rule id — or the attributes of a generated
 * rule — is already taken in the tenant, the whole request is refused (409
 * ONBOARDING_CONFLICT listing every conflicting id) and nothing is created.
 */
import type { RuleService } from '../rules/rule-service.js';
import { ruleEcho } from '../rules/rule-service.js';
import { DEFAULT_ONBOARD_PRIMARY_WEIGHT, type OnboardRequest } from '../schemas/onboarding.js';
import type { Tenant } from '../tenants/tenant.js';
import { generateRules, validateOnboarding } from './generate.js';

export interface OnboardResult {
  rules_created: number;
  rules: ReturnType<typeof ruleEcho>[];
  processors: string[];
}

export async function onboard(rules: RuleService, tenant: Tenant, req: OnboardRequest, now = new Date()): Promise<OnboardResult> {
  const processors = validateOnboarding(req);
  const records = generateRules(processors, req.primary_weight ?? DEFAULT_ONBOARD_PRIMARY_WEIGHT, now);
  await rules.createMany(tenant, records);
  return {
    rules_created: records.length,
    rules: records.map(ruleEcho),
    processors: processors.map((p) => p.processor_id),
  };
}
