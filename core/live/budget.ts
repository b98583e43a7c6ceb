/**
 * Budget refusals (issue 29 item 1): which calls of a live run the spending ceiling refused
 * (failure "spending_ceiling": the reservation would have crossed it, so the call was not made),
 * and whether the run still did its job. A run the ceiling left with fewer than two answering
 * voices answers as the ceiling (503 SPENDING_CEILING_REACHED, not retryable: no retry can
 * succeed until an operator raises it); a run that still did its job says in its body which
 * calls the ceiling refused (refused_for_budget).
 */

export const BUDGET_FAILURE = 'spending_ceiling';

/** One call the ceiling refused: a panel voice (round 1 or round 2), a chair, or a pass of a trace. */
export interface BudgetRefusal {
  stage: 'panel' | 'round2' | 'chair' | 'trace-baseline' | 'trace-augmented' | 'trace-delta';
  /** The voice or chair name. */
  name: string;
  model_id?: string;
}

interface VoiceLike {
  name?: string;
  model?: string;
  model_id?: string;
  status: string;
  failure?: string;
  round2?: { status?: string; failure?: string };
}

/** What a council or deliberation result says of its voices and chair. */
export interface PanelRunLike {
  panel: readonly VoiceLike[];
  /** A chair attempt's problem starts with the failure ("spending_ceiling: ...") when the call was refused. */
  chair_attempts?: readonly { chair: string; problem: string }[];
}

export function budgetRefusals(run: PanelRunLike): BudgetRefusal[] {
  const refusals: BudgetRefusal[] = [];
  for (const voice of run.panel) {
    const name = voice.name ?? voice.model ?? '';
    const modelId = voice.model_id !== undefined ? { model_id: voice.model_id } : {};
    if (voice.status === 'failed' && voice.failure === BUDGET_FAILURE) refusals.push({ stage: 'panel', name, ...modelId });
    if (voice.round2?.status === 'failed' && voice.round2.failure === BUDGET_FAILURE) refusals.push({ stage: 'round2', name, ...modelId });
  }
  for (const attempt of run.chair_attempts ?? []) {
    if (attempt.problem.startsWith(`${BUDGET_FAILURE}:`) && !refusals.some((entry) => entry.stage === 'chair' && entry.name === attempt.chair)) {
      refusals.push({ stage: 'chair', name: attempt.chair });
    }
  }
  return refusals;
}

/** The ceiling left too few voices to do the job: it refused a voice and fewer than two answered. */
export function ceilingLeftTooFew(run: PanelRunLike): boolean {
  const answered = run.panel.filter((voice) => voice.status === 'answered').length;
  return answered < 2 && run.panel.some((voice) => voice.status === 'failed' && voice.failure === BUDGET_FAILURE);
}
