//! From label log-probabilities to answers: a softmax with temperature, the peak
//! confidence, the expected score.

use super::ClassifierAnswer;
use super::ClassifierQuestion;

/// Softmax over label log-probabilities, each divided by `temperature` first.
pub fn label_probabilities(logprobs: &[f64], temperature: f64) -> Vec<f64> {
    let scaled: Vec<f64> = logprobs.iter().map(|l| l / temperature).collect();
    let max = scaled.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let weights: Vec<f64> = scaled.iter().map(|v| (v - max).exp()).collect();
    let total: f64 = weights.iter().sum();
    weights.iter().map(|w| w / total).collect()
}

/// TypeSafe's choice confidence, `(n * peak - 1) / (n - 1)`, clamped to [0, 1].
pub fn peak_confidence(probabilities: &[f64]) -> f64 {
    let n = probabilities.len() as f64;
    let peak = probabilities
        .iter()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    ((n * peak - 1.0) / (n - 1.0)).clamp(0.0, 1.0)
}

/// The answer label probabilities (in the order of `keys`) stand for.
pub(super) fn answer_from_probabilities(
    question: &ClassifierQuestion,
    keys: &[String],
    probabilities: &[f64],
) -> ClassifierAnswer {
    match question {
        // `true` is the first key of a bool question.
        ClassifierQuestion::Bool { .. } => ClassifierAnswer::Bool {
            probability: probabilities[0],
        },
        ClassifierQuestion::Score { .. } => ClassifierAnswer::Score {
            score: probabilities
                .iter()
                .enumerate()
                .map(|(level, p)| level as f64 * p)
                .sum(),
            confidence: peak_confidence(probabilities),
        },
        ClassifierQuestion::Choice { .. } => {
            // The first of equally likely options wins.
            let mut best = 0;
            for (index, p) in probabilities.iter().enumerate().skip(1) {
                if *p > probabilities[best] {
                    best = index;
                }
            }
            ClassifierAnswer::Choice {
                choice: keys[best].clone(),
                probabilities: keys.iter().cloned().zip(probabilities.to_vec()).collect(),
                confidence: peak_confidence(probabilities),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn softmax_and_confidence() {
        let p = label_probabilities(&[0.0, 0.0], 1.0);
        assert_eq!(p, vec![0.5, 0.5]);
        assert_eq!(peak_confidence(&p), 0.0);
        let sharp = label_probabilities(&[(0.75f64).ln(), (0.25f64).ln()], 1.0);
        assert!((sharp[0] - 0.75).abs() < 1e-12);
        assert!((peak_confidence(&sharp) - 0.5).abs() < 1e-12);
        // Temperature 2 takes the square root of each weight before normalizing.
        let soft = label_probabilities(&[(0.9f64).ln(), (0.1f64).ln()], 2.0);
        assert!((soft[0] - 0.75).abs() < 1e-12, "{soft:?}");
    }
}
