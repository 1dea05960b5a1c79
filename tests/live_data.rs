//! Data that change while the scene runs stay live for their readers: an engine whose input
//! moves recomputes its outputs at the start of the step, and Data linked to them follow.
#![allow(clippy::disallowed_methods)] // tests check output Data by name

mod common;

use common::load;
use settee_core::simulation::animate;
use settee_core::Scene;

fn data_of<'a>(s: &'a Scene, name: &str) -> &'a settee_core::DataSet {
    &s.components.values().find(|e| e.name == name).unwrap_or_else(|| panic!("no {name}")).data
}

#[test]
fn a_box_roi_on_moving_positions_follows_them_and_engines_reading_it_follow_too() {
    // Two particles fall with g = −10, h = 0.1 (implicit Euler: y_n = y_0 − 0.1·n(n+1)/2)
    // through the box y ∈ [0, 1]: A from 0.45 (0.35, 0.15, −0.15, …), B from 1.85 (1.75, 1.55,
    // 1.25, 0.85, 0.35, −0.25). The selection is made at the start of each step, from the
    // positions the previous step ended with. A second BoxROI selects every point the first one
    // selected, through a link to its output.
    let mut s = load(
        "live-roi",
        r#"<Node name="root" dt="0.1" gravity="0 -10 0">
  <EulerImplicitSolver/>
  <CGLinearSolver iterations="10" tolerance="1e-20" threshold="1e-30"/>
  <MechanicalObject name="dofs" position="0 0.45 0  0 1.85 0"/>
  <UniformMass vertexMass="1"/>
  <BoxROI name="roi" box="-1 0 -1  1 1 1" position="@dofs.position"/>
  <BoxROI name="again" box="-10 -10 -10  10 10 10" position="@roi.pointsInROI"/>
</Node>"#,
    );
    let selected = |s: &Scene| data_of(s, "roi").indices("indices").to_vec();
    assert_eq!(selected(&s), vec![0]);
    let mut history = Vec::new();
    let mut counts = Vec::new();
    for _ in 0..7 {
        animate(&mut s, 0.1).unwrap();
        history.push(selected(&s));
        counts.push(data_of(&s, "again").int("nbIndices"));
    }
    let none: Vec<usize> = Vec::new();
    assert_eq!(history, vec![vec![0], vec![0], vec![0], none.clone(), vec![1], vec![1], none]);
    assert_eq!(counts, vec![1, 1, 1, 0, 1, 1, 0]);
}

#[test]
fn without_do_update_the_selection_stays_as_made_at_init() {
    let mut s = load(
        "live-roi-frozen",
        r#"<Node name="root" dt="0.1" gravity="0 -10 0">
  <EulerImplicitSolver/>
  <CGLinearSolver iterations="10" tolerance="1e-20" threshold="1e-30"/>
  <MechanicalObject name="dofs" position="0 0.45 0"/>
  <UniformMass vertexMass="1"/>
  <BoxROI name="roi" box="-1 0 -1  1 1 1" position="@dofs.position" doUpdate="false"/>
</Node>"#,
    );
    for _ in 0..5 {
        animate(&mut s, 0.1).unwrap();
    }
    assert_eq!(data_of(&s, "roi").indices("indices"), &[0]);
}
