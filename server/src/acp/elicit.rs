//! Choices put to the user as forms (ACP's `elicitation/create`, stable in
//! v1), for a client that offers `elicitation.form`. Plan mode's review is
//! one: a permission question has only buttons, so "Keep planning" could
//! say nothing about what to change; the form asks for the decision and,
//! beside it, what to change. A client that fails the form (an error) is
//! asked the permission question instead. An MCP server's question
//! (elicitation) is put to the user as the same kind of form.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use agent_client_protocol::v1::schema::{
    BooleanPropertySchema, CreateElicitationRequest, ElicitationAction, ElicitationContentValue, ElicitationFormMode, ElicitationSchema, ElicitationScope,
    ElicitationSessionScope, EnumOption, IntegerPropertySchema, NumberPropertySchema, Plan, SessionUpdate, StringPropertySchema,
};
use async_trait::async_trait;

use super::session::{plan_entries, AcpPlanReview, SessionCore, PERMISSION_TIMEOUT};
use crate::mcp::elicit::{Answer, Elicitation, Elicitor, Field, FieldKind};
use crate::sync::MutexExt;
use crate::tools::plan_mode::{PlanAnswer, PlanReview};

/// The form's fields and the decision's values.
const DECISION: &str = "decision";
const FEEDBACK: &str = "feedback";
const EXECUTE: &str = "execute";
const EXECUTE_ACCEPT_EDITS: &str = "execute_accept_edits";
const KEEP_PLANNING: &str = "keep_planning";

/// What came of a form.
#[derive(Debug, Clone, PartialEq)]
pub enum Filled {
    /// Accepted, with the values given.
    Accepted(BTreeMap<String, ElicitationContentValue>),
    /// The user declined to answer.
    Declined,
    /// Dismissed, the run was cancelled, or no answer in time: the reason.
    Unanswered(String),
    /// The client could not show it (it answered with an error).
    Failed(String),
}

/// Ask the session's user to fill in `schema`, bounded as a permission
/// question is (the run's cancel, [`PERMISSION_TIMEOUT`]).
pub async fn ask(core: &SessionCore, message: String, schema: ElicitationSchema) -> Filled {
    let scope = ElicitationScope::Session(ElicitationSessionScope::new(core.id.clone()));
    let request = CreateElicitationRequest::new(ElicitationFormMode::new(scope, schema), message);
    let cancel = core.cancel.locked().clone().unwrap_or_default();
    let answer = tokio::select! {
        _ = cancel.cancelled() => return Filled::Unanswered("the run was cancelled".into()),
        answer = tokio::time::timeout(PERMISSION_TIMEOUT, core.link.elicit(request)) => answer,
    };
    match answer {
        Err(_) => Filled::Unanswered(format!("the user did not answer within {} s", PERMISSION_TIMEOUT.as_secs())),
        Ok(Err(err)) => Filled::Failed(err),
        Ok(Ok(ElicitationAction::Accept(accepted))) => Filled::Accepted(accepted.content.unwrap_or_default()),
        Ok(Ok(ElicitationAction::Decline)) => Filled::Declined,
        Ok(Ok(ElicitationAction::Cancel)) => Filled::Unanswered("the user dismissed the form".into()),
        Ok(Ok(_)) => Filled::Unanswered("the client answered the form with an action this agent does not know".into()),
    }
}

/// The plan review's form: the decision (one of three) and what to change.
fn plan_form() -> ElicitationSchema {
    let decision = StringPropertySchema::new()
        .title("Decision".to_string())
        .one_of(vec![
            EnumOption::new(EXECUTE, "Execute"),
            EnumOption::new(EXECUTE_ACCEPT_EDITS, "Execute and accept edits"),
            EnumOption::new(KEEP_PLANNING, "Keep planning"),
        ])
        .default_value(EXECUTE.to_string());
    let feedback = StringPropertySchema::new()
        .title("What to change".to_string())
        .description("When you keep planning: what Tandem should change in the plan".to_string());
    ElicitationSchema::new().title("Review the plan".to_string()).property(DECISION, decision, true).property(FEEDBACK, feedback, false)
}

/// The review's answer from the form's values (`None`: a decision the form
/// did not offer, so no answer).
fn plan_answer(values: &BTreeMap<String, ElicitationContentValue>) -> Option<PlanAnswer> {
    let text = |name: &str| match values.get(name) {
        Some(ElicitationContentValue::String(text)) => Some(text.clone()),
        _ => None,
    };
    match text(DECISION)?.as_str() {
        EXECUTE => Some(PlanAnswer::Execute),
        EXECUTE_ACCEPT_EDITS => Some(PlanAnswer::ExecuteAcceptEdits),
        KEEP_PLANNING => Some(PlanAnswer::KeepPlanning { feedback: text(FEEDBACK).unwrap_or_default().trim().to_string() }),
        _ => None,
    }
}

/// Plan mode's review as a form: the plan as `plan` entries, then the form.
pub struct FormPlanReview(pub Arc<SessionCore>);

#[async_trait]
impl PlanReview for FormPlanReview {
    async fn review(&self, plan_file: &Path, plan: &str) -> Option<PlanAnswer> {
        let core = &self.0;
        core.notify(SessionUpdate::Plan(Plan::new(plan_entries(plan))));
        let message = format!("Tandem's plan ({}):\n\n{plan}", core.display(plan_file));
        match ask(core, message, plan_form()).await {
            Filled::Accepted(values) => plan_answer(&values),
            // Declining the plan is not approving it.
            Filled::Declined => Some(PlanAnswer::KeepPlanning { feedback: String::new() }),
            Filled::Unanswered(reason) => {
                tracing::info!(%reason, "the plan review got no answer");
                None
            }
            Filled::Failed(err) => {
                tracing::warn!(%err, "the client could not show the plan review's form: asking with a permission question");
                AcpPlanReview(Arc::clone(core)).review(plan_file, plan).await
            }
        }
    }
}

/// An MCP server's question (elicitation) as the session's form: the
/// server's fields, typed, with the server named in the message.
pub struct McpFormElicitor(pub Arc<SessionCore>);

#[async_trait]
impl Elicitor for McpFormElicitor {
    async fn elicit(&self, question: &Elicitation) -> Answer {
        let message = format!("The MCP server {} asks: {}", question.server, question.message);
        match ask(&self.0, message, mcp_form(&question.fields)).await {
            Filled::Accepted(values) => Answer::Accept(values.into_iter().map(|(name, value)| (name, json_value(value))).collect()),
            Filled::Declined => Answer::Decline,
            Filled::Unanswered(reason) => {
                tracing::info!(server = %question.server, %reason, "the MCP server's question got no answer");
                Answer::Cancel
            }
            // The client cannot show it: as if nobody could be asked.
            Filled::Failed(err) => {
                tracing::warn!(server = %question.server, %err, "the client could not show the MCP server's form");
                Answer::Decline
            }
        }
    }
}

/// The form for an MCP server's fields.
fn mcp_form(fields: &[Field]) -> ElicitationSchema {
    fields.iter().fold(ElicitationSchema::new(), |schema, field| {
        let title = field.label.clone();
        match &field.kind {
            FieldKind::Text => schema.property(field.name.clone(), StringPropertySchema::new().title(title), field.required),
            FieldKind::Choice(values) => schema.property(field.name.clone(), StringPropertySchema::new().title(title).enum_values(values.clone()), field.required),
            FieldKind::Number => schema.property(field.name.clone(), NumberPropertySchema::new().title(title), field.required),
            FieldKind::Integer => schema.property(field.name.clone(), IntegerPropertySchema::new().title(title), field.required),
            FieldKind::Boolean => schema.property(field.name.clone(), BooleanPropertySchema::new().title(title), field.required),
        }
    })
}

fn json_value(value: ElicitationContentValue) -> serde_json::Value {
    match value {
        ElicitationContentValue::String(text) => text.into(),
        ElicitationContentValue::Integer(n) => n.into(),
        ElicitationContentValue::Number(n) => n.into(),
        ElicitationContentValue::Boolean(b) => b.into(),
        ElicitationContentValue::StringArray(texts) => texts.into(),
        // A kind of value newer than this agent: the server's check says no.
        _ => serde_json::Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(pairs: &[(&str, &str)]) -> BTreeMap<String, ElicitationContentValue> {
        pairs.iter().map(|(k, v)| (k.to_string(), ElicitationContentValue::String(v.to_string()))).collect()
    }

    #[test]
    fn the_plan_forms_values_are_the_reviews_answer() {
        assert_eq!(plan_answer(&values(&[("decision", "execute")])), Some(PlanAnswer::Execute));
        assert_eq!(plan_answer(&values(&[("decision", "execute_accept_edits"), ("feedback", "x")])), Some(PlanAnswer::ExecuteAcceptEdits));
        assert_eq!(
            plan_answer(&values(&[("decision", "keep_planning"), ("feedback", " use a queue ")])),
            Some(PlanAnswer::KeepPlanning { feedback: "use a queue".into() })
        );
        assert_eq!(plan_answer(&values(&[("decision", "ship_it")])), None);
        assert_eq!(plan_answer(&values(&[])), None);
    }
}
