mod completion;
mod editing;
mod paste;
mod render;
mod support;
