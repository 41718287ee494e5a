mod models;
mod scripts;
