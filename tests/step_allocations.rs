//! The step allocates nothing (issue 19, point 2): past its warm-up, a step of every scene of the
//! demo set (SOFA's demos, the suite's Contact_ImprovedJacobi_BlockGS and the large tetrahedral
//! cube of `../shared/perf/scenes`) allocates no memory, or no more than a ceiling while known
//! sites remain (listed with each scene). Constraint rows, W, the solvers' work
//! arrays, the contact sets and the corrections' buffers are kept from one step to the next.
//! The contact-churn scene, where contacts come and go, has its own test (`contact_churn.rs`).
//!
//! A counting global allocator counts the allocations of every thread during each step (the
//! step's parallel loops run on rayon's workers), so this binary holds this one test.
//!
//! `SETTEE_ALLOC_SCENE=<part of a name>` runs only the matching scenes,
//! `SETTEE_ALLOC_STEPS=<warm-up>,<counted>` sets the steps, and `SETTEE_ALLOC_TRACE=1` prints a
//! backtrace of every allocation counted (`=100`: of one in 100): the way to find what
//! allocates.

use std::path::{Path, PathBuf};
use std::time::Instant;

use settee_testkit::alloc;

#[global_allocator]
static GLOBAL: alloc::Counting = alloc::Counting;

/// A scene of the demo set, how long it warms up, how many steps are counted, and the most
/// allocations a step may make: 0, or a ceiling while known sites remain (named in `left`).
struct Case {
    scene: PathBuf,
    data_dirs: Vec<PathBuf>,
    warm_up: usize,
    counted: usize,
    most: u64,
    left: &'static str,
}

/// Loads the scene, steps it `warm_up` times, then counts the allocations of each of the next
/// `counted` steps: the most in one step and the sum.
fn run(case: &Case) -> (u64, u64) {
    let l =
        settee::load(&case.scene, &settee::factory(), &case.data_dirs).unwrap_or_else(|f| panic!("{}: {}", case.scene.display(), f.first_error()));
    let mut scene = l.scene;
    // Exporters of a demo write into a scratch directory, not the working tree.
    scene.output_dir = std::env::temp_dir().join(format!("settee-step-allocations-{}", std::process::id()));
    let dt = scene.root().context.dt;
    for _ in 0..case.warm_up {
        settee_core::simulation::animate(&mut scene, dt).unwrap_or_else(|e| panic!("{}: {e}", case.scene.display()));
    }
    let (mut most, mut sum) = (0, 0);
    for _ in 0..case.counted {
        let (r, a) = alloc::count_all_threads(|| settee_core::simulation::animate(&mut scene, dt));
        r.unwrap_or_else(|e| panic!("{}: {e}", case.scene.display()));
        most = most.max(a);
        sum += a;
    }
    (most, sum)
}

fn cases() -> Option<Vec<Case>> {
    let examples = settee_testkit::shared_dir("sofa-examples")?;
    let suite = settee_testkit::suite()?;
    let perf = settee_testkit::shared_dir("perf")?;
    let share = examples.join("share");
    let demo = |name: &str, warm_up, counted, most, left| Case {
        scene: examples.join("examples/Demos").join(name),
        data_dirs: vec![share.clone()],
        warm_up,
        counted,
        most,
        left,
    };
    // The ceilings are what the known sites still allocate (measured, with some margin for
    // steps where the contacts differ); a site fixed lowers its scene's ceiling.
    // New contacts beyond the capacity the warm-up reserved: the contact mappings' points and
    // states, the penalty force field's contact list.
    const CONTACTS: &str = "contacts beyond the reserved capacity";
    // A Data linked to another whose value changes every step is converted into a new value;
    // the mappings' geometric stiffness adds the constraint forces to a copy of the forces; the
    // divergence guard records each new maximum.
    const LINKED: &str = "a linked Data converted anew, the geometric stiffness's total forces, a new maximum of the divergence guard";
    Some(vec![
        // 7 measured: the scoped thread that runs the collision detection during the free
        // motion (its spawn), HexahedronFEMForceField's stiffness list when the system is
        // assembled, LCPConstraintSolver's error graph written into its Data.
        demo(
            "caduceus.scn",
            30,
            10,
            10,
            "the detection thread's spawn, HexahedronFEMForceField's stiffness list, LCPConstraintSolver's error graph Data",
        ),
        demo("liver.scn", 30, 20, 0, ""),
        demo(
            "SofaWasher.scn",
            20,
            10,
            240,
            "EigenSparseLU's numeric factorization (faer allocates its factors), the unilateral law's lists, contacts beyond the reserved capacity",
        ),
        demo("collisionMultiple.scn", 30, 10, 20, CONTACTS),
        demo("chainAll.scn", 10, 5, 50, CONTACTS),
        demo("fallingBeamLagrangianCollision.scn", 30, 10, 8, LINKED),
        Case {
            scene: suite.join("scenes/Component/Constraint/Lagrangian/Contact_ImprovedJacobi_BlockGS.scn"),
            data_dirs: vec![suite.join("data")],
            warm_up: 10,
            counted: 3,
            most: 12,
            left: LINKED,
        },
        // About 0.7 s a step: two steps past the first contacts.
        Case { scene: perf.join("scenes/tetcube15.scn"), data_dirs: vec![], warm_up: 3, counted: 2, most: 6, left: LINKED },
    ])
}

fn name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

#[test]
fn a_step_of_the_demo_set_allocates_nothing() {
    let Some(cases) = cases() else { return };
    let only = std::env::var("SETTEE_ALLOC_SCENE").unwrap_or_default();
    let steps: Option<(usize, usize)> = std::env::var("SETTEE_ALLOC_STEPS").ok().and_then(|v| {
        let (w, c) = v.split_once(',')?;
        Some((w.trim().parse().ok()?, c.trim().parse().ok()?))
    });
    let mut cases = cases;
    if let Some((warm_up, counted)) = steps {
        cases.iter_mut().for_each(|c| (c.warm_up, c.counted) = (warm_up, counted));
    }
    let mut failures = Vec::new();
    for case in cases.iter().filter(|c| name(&c.scene).contains(&only)) {
        let t = Instant::now();
        let (most, sum) = run(case);
        eprintln!(
            "{}: at most {most} allocations in one of {} steps after {} ({sum} in all; allowed {}), {:.1} s",
            name(&case.scene),
            case.counted,
            case.warm_up,
            case.most,
            t.elapsed().as_secs_f64()
        );
        if most > case.most {
            failures.push(format!("{}: {most} allocations in a step, at most {} expected ({})", name(&case.scene), case.most, case.left));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
