// Whether the models the product is configured with exist, asked once at the LLM worker's start
// (GET /v1/models/{id}): a model the API does not know fails every call with 404, so the operator
// hears of it at once rather than from the first thread. Other failures (no network, a refused key)
// say nothing here: the first model call reports those.
import { NotFoundError } from '@anthropic-ai/sdk';
import type Anthropic from '@anthropic-ai/sdk';

/** The models of `models` the API answers 404 for (or lists as retired), each once. */
export async function modelsNotFound(client: Anthropic, models: readonly string[]): Promise<string[]> {
  const missing: string[] = [];
  for (const model of new Set(models)) {
    try {
      const info = await client.models.retrieve(model);
      if (info.lifecycle === 'retired') missing.push(model);
    } catch (err) {
      if (err instanceof NotFoundError) missing.push(model);
    }
  }
  return missing;
}

/** The one line a worker logs for a missing model. */
export function missingModelLine(model: string, setting: string): string {
  return `the configured model ${model} (${setting}) does not exist: GET /v1/models/${model} answers 404; LLM work pauses per account (reason: model) until ${setting} names a model that exists`;
}
